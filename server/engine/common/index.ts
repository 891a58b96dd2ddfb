export * from './access.js';
export * from './context.js';
export * from './crypto.js';
export * from './diff.js';
export * from './event.js';
export * from './paging.js';
export * from './runner.js';
export * from './sql.js';
