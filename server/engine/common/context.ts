/**
 * What every engine command receives: the database, the sealer for payloads and secrets, and the
 * configuration. Commands take `(ctx, actor, input)`, run one transaction and return plain objects.
 */
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import type { EventFeed } from './event.js';
import type { EngineCounters } from './counters.js';
import type { Sealer } from './crypto.js';

/** drizzle on a transaction's connection (db/pg.ts `transaction`). */
export type Tx = Db;
/** drizzle on the pool or on a transaction's connection. */
export type Executor = Db;

export interface EngineContext {
  db: Db;
  sealer: Sealer;
  config: Config;
  /** the events of every engine process (LISTEN/NOTIFY); null in tools that run without it */
  notifier: EventFeed | null;
  /** this process's in-memory counts, rendered on /metrics */
  counters: EngineCounters;
}

export type PrincipalKind = 'WORKER' | 'HUMAN' | 'ADMIN';

/** The authenticated caller. `projectId` null = a global principal (the first-party worker). */
export interface Actor {
  principalId: string;
  kind: PrincipalKind;
  name: string;
  projectId: string | null;
  groups: string[];
  topics: string[];
}
