/** What tests use of auth/'s insides (not part of its face, index.ts). */
export { AccessTokenVerifier } from './access-tokens.js';
export { OidcClient } from './oidc.js';
