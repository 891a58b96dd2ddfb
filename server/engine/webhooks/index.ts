export * from './dispatch.js';
export * from './signing.js';
export * from './subscriptions.js';
export * from './views.js';
