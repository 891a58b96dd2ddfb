export * from './principals.js';
