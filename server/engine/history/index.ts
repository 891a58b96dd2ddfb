/** The append-only, hash-chained history of an instance (SPEC §8). */
export {
  type AuditVerification,
  type HistoryEntry,
  actorLabel,
  appendHistory,
  verifyChain,
} from './chain.js';
