/** Principals, their tokens and sessions, and their lifecycle. */
export { clientActor } from './clients.js';
export { registerFirstPartyWorkers } from './first-party.js';
export { type ProviderIdentity, groupsFromClaim, principalName, providerActor } from './external.js';
export {
  createPrincipal,
  disablePrincipal,
  listPrincipals,
  rotatePrincipalToken,
  updatePrincipal,
} from './lifecycle.js';
export { bearerToken, constantTimeEqual, identify } from './principals.js';
export {
  type ProviderTokens,
  type SessionView,
  endSession,
  openSession,
  refreshSession,
  sessionBySecret,
  sessionsDueForRefresh,
} from './sessions.js';
export { type PrincipalView, actorView } from './views.js';
