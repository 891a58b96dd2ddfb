export * from './lifecycle.js';
export * from './principals.js';
export {
  actorView,
  BOOTSTRAP_ADMIN_ID,
  type PrincipalView,
} from './views.js';
