/** What every engine command shares: its context and actor, errors, sealing, canonical digests, paging. */
export type { StreamPayload } from '../../db/schema.js';
export { EVENTS_CHANNEL } from '../../db/statements/history.js';
export { actorProject, isUuid, omit, requireAdmin, sameProject, systemAdmin } from './access.js';
export type { Actor, EngineContext, Executor, PrincipalKind, Tx } from './context.js';
export { type BackgroundLoop, countFallback, createCounters } from './counters.js';
export { Sealer } from './crypto.js';
export { type Change, describeChanges, diffJson } from './diff.js';
export type { EngineEvent, EventFeed, StreamEvent } from './event.js';
export { ping, readiness } from './health.js';
export { uuidV7 } from './ids.js';
export { idempotencyKeyFor } from './keys.js';
export { cursorCondition, cursorOrder, page, pageSize } from './paging.js';
export { startBackgroundRunner } from './runner.js';
export { query } from './sql.js';
