import { and, eq, inArray, sql } from 'drizzle-orm';
import { approvals } from '../../db/schema.js';
import type { Tx } from '../common/index.js';
import { notify } from '../events/index.js';
import { appendHistory } from '../history/index.js';

/** Pending approvals of retired tasks become RETIRED: a late decision then gets WORK_RETIRED. */
export async function retireApprovalsOfTasks(
  tx: Tx,
  taskIds: string[],
  projectId: string,
  actor: string,
): Promise<void> {
  if (taskIds.length === 0) return;
  const retired = await tx
    .update(approvals)
    .set({ state: 'RETIRED', decidedAt: sql`now()` })
    .where(and(inArray(approvals.taskId, taskIds), eq(approvals.state, 'PENDING')))
    .returning({
      id: approvals.id,
      processInstanceId: approvals.processInstanceId,
      taskId: approvals.taskId,
      digest: approvals.digest,
    });
  for (const a of retired) {
    await appendHistory(tx, {
      projectId,
      processInstanceId: a.processInstanceId,
      eventType: 'APPROVAL_RETIRED',
      actor,
      taskId: a.taskId,
      approvalId: a.id,
      data: { digest: a.digest },
    });
    await notify(tx, { type: 'approval', approvalId: a.id, projectId, change: 'retired' });
  }
}
