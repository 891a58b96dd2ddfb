/**
 * What every engine command receives: the database, the sealer for payloads and secrets, and the
 * configuration. Commands take `(ctx, actor, input)`, run one transaction and return plain objects.
 */
import { sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import type { Notifier, EngineEvent } from '../db/notify.js';
import { EVENTS_CHANNEL } from '../db/notify.js';
import type { Sealer } from './crypto.js';
import { enqueueWebhooks } from './outbox.js';

export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type Executor = Db | Tx;

export interface EngineContext {
  db: Db;
  sealer: Sealer;
  config: Config;
  notifier: Notifier | null;
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

/** The pg client under a drizzle executor: the transaction's connection, or the pool outside one. */
export function pgClientOf(ex: Executor): pg.ClientBase | pg.Pool {
  return (ex as unknown as { session: { client: pg.ClientBase | pg.Pool } }).session.client;
}

const dialect = new PgDialect();
const statementNames = new Map<string, string>();

/**
 * `query` as a named prepared statement: PostgreSQL parses and plans it once per connection instead of
 * on every call. For the hot path only (the claim, the step-by-step journal's writes): each distinct
 * text gets its own name and stays prepared on every connection that ran it, so a statement's text may
 * vary only among a few forms (the claim: per maxTasks value and with or without a project filter).
 * Timestamps come back as Dates.
 */
export async function queryPrepared<T = Record<string, unknown>>(ex: Executor, q: SQL): Promise<T[]> {
  const { sql: text, params } = dialect.sqlToQuery(q);
  let name = statementNames.get(text);
  if (!name) {
    name = `abada_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  const res = await pgClientOf(ex).query({ name, text, values: params as unknown[] });
  return res.rows as T[];
}

/** Runs a raw statement and returns its rows (typed by the caller). */
export async function query<T = Record<string, unknown>>(ex: Executor, q: SQL): Promise<T[]> {
  const res = await ex.execute(q);
  return res.rows as T[];
}

/**
 * Queues an event for subscribers; delivered by PostgreSQL only when the transaction commits. Approval
 * and incident events also land in the webhook outbox in the same transaction (see outbox.ts).
 */
export async function notify(tx: Executor, event: EngineEvent): Promise<void> {
  await tx.execute(sql`SELECT pg_notify(${EVENTS_CHANNEL}, ${JSON.stringify(event)})`);
  await enqueueWebhooks(tx, event);
}

/** Announces a task's new state (subscribers of taskChanged, long-polling fetchers when OPEN). */
export async function notifyTask(
  tx: Executor,
  task: { id: string; processInstanceId: string; projectId: string; topicName: string },
  state: string,
): Promise<void> {
  await notify(tx, {
    type: 'task',
    taskId: task.id,
    processInstanceId: task.processInstanceId,
    projectId: task.projectId,
    state,
    topic: task.topicName,
  });
}

/** The project an actor works in; admins and humans always have one, a global worker may not. */
export function actorProject(actor: Actor): string {
  return actor.projectId ?? 'default';
}

/** Whether the actor may see rows of this project. */
export function sameProject(actor: Actor, projectId: string | null): boolean {
  return actor.projectId === null || actor.projectId === projectId;
}
