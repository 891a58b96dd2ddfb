/** What tests use of approvals/'s insides (not part of its face, index.ts). */
export { sweepExpired } from './expiry.js';
export { sweepSla } from './sla.js';
