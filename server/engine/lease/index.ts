/** The lease of an external task: the lock every worker report takes and its checks, failing an attempt. */
export { type LockedTaskRow, withTaskDates } from '../../db/statements/tasks.js';
export {
  type AttemptFailure,
  attemptHistory,
  closeTaskFailedIncidents,
  failAttempt,
  settleUnknownOutcomes,
  startedWrites,
  writesOf,
} from './attempts.js';
export { settleWritesForGood } from './retire.js';
export { assertLease, assertNotRetired, isRetired, lockTask, lockedRow } from './lock.js';
