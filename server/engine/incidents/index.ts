export * from './incidents.js';
export * from './views.js';
