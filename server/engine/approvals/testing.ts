/** What tests use of approvals/'s insides (not part of its face, index.ts). */
export { sweepExpired, sweepSla } from './sla.js';
