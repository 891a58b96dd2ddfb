/** Worker registration and health. */
export {
  type WorkerView,
  heartbeat,
  listWorkers,
  recordOutcome,
  recordRejection,
  registerWorker,
} from './registry.js';
