export * from './claim.js';
export * from './completion.js';
export * from './ops.js';
export * from './views.js';
