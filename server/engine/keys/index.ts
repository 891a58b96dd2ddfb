export * from './rotate.js';
