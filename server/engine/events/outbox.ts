/**
 * The webhook outbox: `notify()` calls `enqueueWebhooks` in the event's transaction, so a delivery row
 * exists exactly when the change committed, and any engine may send it later. The data is a snapshot of
 * the approval or incident as the API shows it then, minus the sealed arguments (the dispatcher adds them,
 * redacted). When nobody subscribed, the driving scan of the partial index
 * `webhook_subscriptions_project_idx` finds nothing and the snapshot is never evaluated: ~0.05 ms per
 * event server side (EXPLAIN ANALYZE in test/ops/webhooks.test.ts keeps it honest).
 */
import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import type { EngineEvent, Executor } from '../common/index.js';

export const WEBHOOK_EVENTS = [
  'approval.opened',
  'approval.decided',
  'approval.escalated',
  'approval.retired',
  'approval.revoked',
  'approval.expired',
  'approval.voided',
  'incident.opened',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

const iso = (col: SQL) => sql`to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const approvalData = (id: string) => sql`SELECT jsonb_build_object(
    'id', a.id, 'projectId', a.project_id, 'state', a.state, 'toolRef', a.tool_ref,
    'server', split_part(a.tool_ref, '/', 1), 'tool', substr(a.tool_ref, strpos(a.tool_ref, '/') + 1),
    'nodeId', a.node_id, 'model', a.model, 'attempt', a.attempt, 'sequence', a.sequence,
    'digest', a.digest, 'candidateGroups', to_jsonb(a.candidate_groups),
    'level', a.current_level + 1, 'levels', jsonb_array_length(a.levels),
    'escalated', a.escalated, 'slaDueAt', ${iso(sql`a.sla_due_at`)},
    'decidedBy', a.decided_by_name, 'decidedAt', ${iso(sql`a.decided_at`)}, 'comment', a.comment,
    'processInstanceId', a.process_instance_id, 'taskId', a.task_id, 'createdAt', ${iso(sql`a.created_at`)}
  ) AS data FROM approvals a WHERE a.id = ${id}::uuid`;

const incidentData = (id: string) => sql`SELECT jsonb_build_object(
    'id', i.id, 'projectId', i.project_id, 'type', i.type, 'state', i.state, 'message', i.message,
    'processInstanceId', i.process_instance_id, 'taskId', i.task_id, 'attempt', i.attempt,
    'sequence', i.sequence, 'workerId', i.worker_id, 'createdAt', ${iso(sql`i.created_at`)}
  ) AS data FROM incidents i WHERE i.id = ${id}::uuid`;

function webhookEventOf(event: EngineEvent): { type: WebhookEvent; projectId: string; snapshot: SQL } | null {
  if (event.type === 'approval') {
    return {
      type: `approval.${event.change}`,
      projectId: event.projectId,
      snapshot: approvalData(event.approvalId),
    };
  }
  if (event.type === 'incident' && event.projectId) {
    return { type: 'incident.opened', projectId: event.projectId, snapshot: incidentData(event.incidentId) };
  }
  return null;
}

/** Inserts one delivery per matching active subscription (none when nobody subscribed), in one statement. */
export async function enqueueWebhooks(tx: Executor, event: EngineEvent): Promise<void> {
  const e = webhookEventOf(event);
  if (!e) return;
  const eventId = randomUUID();
  await tx.execute(sql`
    INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, payload)
    SELECT s.id, ${eventId}::uuid, ${e.type},
           jsonb_build_object('id', ${eventId}::text, 'type', ${e.type}::text,
                              'createdAt', ${iso(sql`now()`)}, 'data', d.data)
      FROM webhook_subscriptions s
      CROSS JOIN LATERAL (${e.snapshot}) d
     WHERE s.project_id = ${e.projectId} AND s.active AND ${e.type}::text = ANY(s.events)`);
}
