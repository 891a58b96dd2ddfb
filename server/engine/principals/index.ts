export * from './lifecycle.js';
export * from './principals.js';
export {
  actorView,
  BOOTSTRAP_ADMIN_ID,
  type PrincipalView,
} from './views.js';
export {
  groupsFromClaim,
  principalName,
  providerActor,
  type ProviderIdentity,
} from './external.js';
export {
  endSession,
  openSession,
  type ProviderTokens,
  refreshSession,
  type SessionLookup,
  sessionBySecret,
  sessionsDueForRefresh,
  type SessionView,
} from './sessions.js';
