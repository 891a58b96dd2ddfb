export * from './gauges.js';
