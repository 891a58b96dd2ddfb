/** What tests use of webhooks/'s insides (not part of its face, index.ts). */
export { keyOf, signStandard } from './signing.js';
