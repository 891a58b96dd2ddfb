/** The append-only, hash-chained history of an instance (SPEC §8). */
export {
  type AuditVerification,
  type HistoryEntry,
  actorLabel,
  appendHistory,
  historyOfInstances,
  verifyChain,
} from './chain.js';
