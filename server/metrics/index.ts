export * from './registry.js';
export * from './render.js';
export * from './serve.js';
