export * from './views.js';
export * from './webhooks.js';
