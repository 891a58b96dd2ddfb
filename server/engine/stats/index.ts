export * from './daily.js';
