/** External tasks (SPEC §3, §7): fetch-and-lock, completion and failure, extending and retrying. */
export { type LeasedTaskView, fetchAndLock } from './claim.js';
export { extendLease, retryTask, toolCredential } from './commands.js';
export { completeTask, failTask } from './completion.js';
export { deferTask } from './defer.js';
export { getTask, type TaskView, tasksOfInstances } from './views.js';
