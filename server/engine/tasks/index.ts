/** External tasks (SPEC §3, §7): fetch-and-lock, completion and failure, extending and retrying. */
export { type LeasedTaskView, fetchAndLock } from './claim.js';
export { completeTask, failTask } from './completion.js';
export { extendLease, getTask, retryTask, tasksOfInstances, toolCredential } from './ops.js';
export type { TaskView } from './views.js';
