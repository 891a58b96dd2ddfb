/** Engine events (LISTEN/NOTIFY and the durable stream): notifying, listening, replaying from a cursor. */
export { Notifier } from './listener.js';
export { notify, notifyTask, taskNotice } from './notify.js';
export { WEBHOOK_EVENTS } from './outbox.js';
export {
  type StreamFilter,
  cursorOf,
  latestPositions,
  positionOf,
  readStream,
  startStreamPruning,
  streamHead,
} from './stream.js';
