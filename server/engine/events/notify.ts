import { sql } from 'drizzle-orm';
import { type EngineEvent, EVENTS_CHANNEL, type Executor } from '../common/index.js';
import { enqueueWebhooks } from './outbox.js';

/**
 * Announces an event, delivered once the transaction commits. Approval and incident events go, in the same
 * transaction, into the durable stream (a `stream_events` row positioned and NOTIFYed by migration 0011's
 * deferred trigger) and the webhook outbox; tasks, jobs and principals are plain NOTIFYs, for now only.
 */
export async function notify(tx: Executor, event: EngineEvent): Promise<void> {
  if (event.type === 'approval' || event.type === 'incident') {
    const objectId = event.type === 'approval' ? event.approvalId : event.incidentId;
    const change = event.type === 'approval' ? event.change : 'opened';
    await tx.execute(sql`
      INSERT INTO stream_events (type, change, object_id, project_id, payload)
      VALUES (${event.type}, ${change}, ${objectId}::uuid, ${event.projectId}, ${JSON.stringify(event)}::jsonb)`);
    await enqueueWebhooks(tx, event);
    return;
  }
  await tx.execute(sql`SELECT pg_notify(${EVENTS_CHANNEL}, ${JSON.stringify(event)})`);
}

type NoticedTask = { id: string; processInstanceId: string; projectId: string; topicName: string };

/** Announces a task's new state (subscribers of taskChanged, long-polling fetchers when OPEN). */
export async function notifyTask(tx: Executor, task: NoticedTask, state: string): Promise<void> {
  await notify(tx, taskNotice(task, state));
}

/** The event notifyTask sends, for a command that sends its notices itself (the completion's tail). */
export function taskNotice(task: NoticedTask, state: string): Extract<EngineEvent, { type: 'task' }> {
  return {
    type: 'task',
    taskId: task.id,
    processInstanceId: task.processInstanceId,
    projectId: task.projectId,
    state,
    topic: task.topicName,
  };
}
