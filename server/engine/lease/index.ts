export * from './attempts.js';
export * from './lock.js';
