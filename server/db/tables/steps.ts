import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  doublePrecision,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uuid,
} from 'drizzle-orm/pg-core';
import type { StepUsage } from '../../shared/types.js';
import { createdAt, references, ts } from './columns.js';
import { externalTasks } from './tasks.js';

/** The step journal (SPEC §4): (task, attempt, sequence). Payloads are encrypted; digests are not. */
export const steps = pgTable(
  'steps',
  {
    taskId: references('task_id', () => externalTasks.id),
    attempt: integer('attempt').notNull(),
    sequence: integer('sequence').notNull(),
    kind: text('kind').$type<'MODEL_CALL' | 'TOOL_CALL'>().notNull(),
    state: text('state')
      .$type<'PROPOSED' | 'APPROVED' | 'REJECTED' | 'STARTED' | 'COMPLETED' | 'FAILED' | 'OUTCOME_UNKNOWN'>()
      .notNull(),
    toolRef: text('tool_ref'),
    /** the frozen policy of the tool (read / write / approval_required); null for model calls */
    policy: text('policy').$type<'read' | 'write' | 'approval_required'>(),
    model: text('model'),
    digest: text('digest').notNull(),
    /** AES-256-GCM sealed JSON of the request / response / error */
    requestEnc: text('request_enc').notNull(),
    responseEnc: text('response_enc'),
    errorEnc: text('error_enc'),
    keyId: text('key_id').notNull(),
    idempotencyKey: text('idempotency_key'),
    comment: text('comment'),
    reused: boolean('reused').notNull().default(false),
    usage: jsonb('usage').$type<StepUsage>(),
    costUsd: doublePrecision('cost_usd'),
    approvalId: uuid('approval_id'),
    /**
     * CALL: a call the model asked for; PRECONDITION / LOOKUP: the engine's reads of a guarded call
     * (SPEC §11), journaled by the worker, left out of the conversation
     */
    purpose: text('purpose').$type<'CALL' | 'PRECONDITION' | 'LOOKUP'>().notNull().default('CALL'),
    /** a write whose unknown outcome a lookup settled: its response is the lookup's answer */
    reconciled: boolean('reconciled').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.taskId, t.attempt, t.sequence] }),
    index('steps_idempotency_key_idx').on(t.idempotencyKey).where(sql`${t.idempotencyKey} IS NOT NULL`),
  ],
);

export type StepRow = typeof steps.$inferSelect;
