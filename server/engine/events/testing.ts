/** What tests use of events/'s insides (not part of its face, index.ts). */
export { enqueueWebhooks } from './outbox.js';
export { pruneStream } from './stream.js';
