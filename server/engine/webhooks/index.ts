export * from './webhooks.js';
