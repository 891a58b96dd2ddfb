export * from './delegation.js';
export * from './jobs.js';
export * from './lifecycle.js';
export * from './list.js';
export * from './pending.js';
export * from './start.js';
export * from './usertasks.js';
export * from './views.js';
