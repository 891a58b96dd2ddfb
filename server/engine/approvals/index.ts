export * from './decide.js';
export * from './list.js';
export * from './propose.js';
export * from './retire.js';
export * from './sla.js';
export * from './views.js';
export * from './visibility.js';
export * from './revoke.js';
