import { sql } from 'drizzle-orm';
import { type Executor, EVENTS_CHANNEL, type EngineEvent } from '../common/index.js';
import { enqueueWebhooks } from './outbox.js';

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
