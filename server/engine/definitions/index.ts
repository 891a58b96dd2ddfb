export * from './apl/index.js';
export * from './deploy.js';
export * from './profile.js';
export * from './spec.js';
