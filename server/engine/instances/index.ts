/** Process instances: starting, moving the token, delegation, cancelling, suspending, boundaries. */
export { sweepBoundaries, takeFailureBoundary } from './boundary.js';
export { startDelegation } from './delegation.js';
export { startJobRunner } from './jobs.js';
export { cancelProcess, resumeProcess, suspendProcess } from './lifecycle.js';
export { type LastWrites, lastWritesValues } from './last-writes.js';
export { enterNode, findNode, instanceEnded, startProcess } from './start.js';
export { completeUserTask, userTasksOf } from './usertasks.js';
export {
  type HistoryEventView,
  type InstanceView,
  type UserTaskView,
  historyOf,
  listInstances,
  loadInstanceFor,
  verifyAudit,
} from './views.js';
