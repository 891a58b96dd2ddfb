export * from './listener.js';
export * from './notify.js';
export * from './outbox.js';
export * from './stream.js';
