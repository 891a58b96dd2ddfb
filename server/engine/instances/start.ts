/**
 * Starting an instance and moving its single token through agent, service, user_task and end nodes.
 * Lock order everywhere: external task(s) → approval → instance.
 */
import { eq, sql } from 'drizzle-orm';
import { processInstances, userTasks, type ProcessInstanceRow } from '../../db/schema.js';
import { INSERT_INSTANCE, INSERT_TASK } from '../../db/statements/start.js';
import { EngineError } from '../../errors.js';
import {
  type AgentNode,
  type FrozenProcess,
  type ProcessNode,
  AGENT_PROFILE_VERSION,
  type AgentWork,
  latestDefinition,
} from '../definitions/index.js';
import {
  type Actor,
  type EngineContext,
  type EngineEvent,
  type StreamPayload,
  type Tx,
  actorProject,
  uuidV7,
} from '../common/index.js';
import { notify, taskNotice } from '../events/index.js';
import { actorLabel, appendHistory, type HistoryEntry } from '../history/index.js';
import type { JsonObject } from '../../shared/types.js';
import { startInstanceTrace } from '../../telemetry/index.js';
import { type LastWrites, writeLast } from './last-writes.js';
import { checkVariables, interpolate } from './variables.js';
import { type InstanceView, instanceView } from './views.js';
import { execute, pipelined, transaction } from '../../db/pg.js';

/** Starts an instance of the latest version of a process and moves its token to the start node. */
export async function startProcess(
  ctx: EngineContext,
  actor: Actor,
  input: { key: string; variables?: unknown; businessKey?: string | null },
): Promise<InstanceView> {
  if (actor.kind === 'WORKER')
    throw new EngineError('FORBIDDEN', 'A worker credential cannot start processes.');
  return transaction(ctx.db, async (tx) =>
    startInstanceTx(tx, {
      projectId: actorProject(actor),
      key: input.key,
      variables: input.variables ?? {},
      businessKey: input.businessKey ?? null,
      startedBy: actor.principalId,
      actor: actorLabel(actor),
    }),
  ).then(instanceView);
}

interface StartInstanceArgs {
  projectId: string;
  key: string;
  variables: unknown;
  businessKey: string | null;
  startedBy: string | null;
  actor: string;
  parentTaskId?: string | null;
  parentSequence?: number | null;
  parentAttempt?: number | null;
  depth?: number;
}

export async function startInstanceTx(tx: Tx, a: StartInstanceArgs): Promise<ProcessInstanceRow> {
  const def = await latestDefinition(tx, a.projectId, a.key);
  if (!def)
    throw new EngineError('NOT_FOUND', `No process "${a.key}" is deployed in this project. Deploy it first.`);
  const errors = checkVariables(def.spec.variables, a.variables);
  if (errors.length) {
    throw new EngineError(
      'VALIDATION_FAILED',
      `The variables do not match process "${a.key}": ${errors[0].message}.`,
      { errors },
    );
  }
  const traced = startInstanceTrace(def.key, def.version);
  // The id is made here, so the instance's INSERT (not awaited), the start node's rows and the history
  // go out together with the last statement (last-writes.ts) instead of each waiting for the one before.
  // checkVariables proved the variables a JSON object.
  const id = uuidV7();
  const inserted = execute(tx, INSERT_INSTANCE, [
    id,
    a.projectId,
    def.id,
    def.key,
    def.version,
    def.spec.start,
    JSON.stringify(a.variables),
    a.businessKey,
    a.startedBy,
    a.parentTaskId ?? null,
    a.parentSequence ?? null,
    a.parentAttempt ?? null,
    a.depth ?? 0,
    traced?.traceparent ?? null,
  ]);
  const last: LastWrites = {
    history: [
      {
        projectId: a.projectId,
        processInstanceId: id,
        eventType: 'INSTANCE_STARTED',
        actor: a.actor,
        data: {
          key: def.key,
          version: def.version,
          definitionId: def.id,
          parentTaskId: a.parentTaskId ?? null,
        },
      },
    ],
    notices: [],
    sent: [inserted],
  };
  const planned = {
    id,
    projectId: a.projectId,
    variables: a.variables as JsonObject,
    currentNodeId: def.spec.start,
  };
  let entered: ProcessInstanceRow | null;
  try {
    entered = await enterNode(tx, planned, def.spec, def.spec.start, 'engine', last, true);
    await writeLast(tx, last);
  } catch (e) {
    // The transaction rolls back. What was sent is awaited (no rejection left unhandled), and its first
    // failure, if any, is the cause (pipelined throws it): what came after only says "aborted".
    await pipelined(...(last.sent ?? []));
    throw e;
  }
  const [inst] = await inserted;
  traced?.end(inst.id);
  return entered ?? inst;
}

export function findNode(spec: FrozenProcess, id: string): ProcessNode {
  const node = spec.nodes.find((n) => n.id === id);
  if (!node) throw new EngineError('INTERNAL', `node ${id} missing from a frozen definition`);
  return node;
}

/** enterNode's history rows and notices: written at once, or left in `last` when there is one. */
function writerFor(tx: Tx, last: LastWrites | undefined) {
  return {
    record: async (e: HistoryEntry) => {
      if (last) last.history.push(e);
      else await appendHistory(tx, e);
    },
    announce: async (e: Exclude<EngineEvent, StreamPayload>) => {
      if (last) last.notices.push(e);
      else await notify(tx, e);
    },
  };
}

/** What enterNode reads of the instance it moves. */
type EnteredInstance = Pick<ProcessInstanceRow, 'id' | 'projectId' | 'variables' | 'currentNodeId'>;

/**
 * Moves the token onto `nodeId` and creates the work it needs; `end` completes the instance. With
 * `last`, its history rows and task notices are left for the caller's last statement (with `last.sent`,
 * its task row is sent unawaited). `inserted`: this transaction inserted the instance row at this node
 * (updated_at is already now()), so it is not updated again and null is returned; otherwise the row now.
 */
export async function enterNode(
  tx: Tx,
  inst: EnteredInstance,
  spec: FrozenProcess,
  nodeId: string,
  actor: string,
  last?: LastWrites,
  inserted = false,
): Promise<ProcessInstanceRow | null> {
  const node = findNode(spec, nodeId);
  const base = { projectId: inst.projectId, processInstanceId: inst.id, actor };
  const { record, announce } = writerFor(tx, last);
  if (node.type === 'end') {
    const [done] = await tx
      .update(processInstances)
      .set({ state: 'COMPLETED', currentNodeId: node.id, endedAt: sql`now()`, updatedAt: sql`now()` })
      .where(eq(processInstances.id, inst.id))
      .returning();
    await instanceEnded(tx, done, node.id, actor, last);
    return done;
  }
  const [moved] =
    inserted && inst.currentNodeId === node.id
      ? [null]
      : await tx
          .update(processInstances)
          .set({ currentNodeId: node.id, updatedAt: sql`now()` })
          .where(eq(processInstances.id, inst.id))
          .returning();
  if (node.type === 'user_task') {
    const [ut] = await tx
      .insert(userTasks)
      .values({
        projectId: inst.projectId,
        processInstanceId: inst.id,
        nodeId: node.id,
        candidateGroups: node.candidateGroups,
        state: 'OPEN',
      })
      .returning();
    await record({
      ...base,
      eventType: 'USER_TASK_CREATED',
      data: { nodeId: node.id, userTaskId: ut.id },
    });
    return moved;
  }
  const taskId = await createTask(tx, inst, node, last);
  await record({
    ...base,
    eventType: 'TASK_CREATED',
    taskId,
    attempt: 1,
    data: { nodeId: node.id, topic: node.topic },
  });
  const task = { id: taskId, processInstanceId: inst.id, projectId: inst.projectId, topicName: node.topic };
  await announce(taskNotice(task, 'OPEN'));
  return moved;
}

/** The external task of an agent or service node, OPEN on its first attempt (unawaited with `last.sent`). */
async function createTask(
  tx: Tx,
  inst: EnteredInstance,
  node: Extract<ProcessNode, { type: 'agent' | 'service' }>,
  last: LastWrites | undefined,
): Promise<string> {
  const id = uuidV7();
  const agent = node.type === 'agent';
  const insert = execute(tx, INSERT_TASK, [
    id,
    inst.projectId,
    inst.id,
    node.id,
    node.type,
    node.topic,
    node.priority,
    node.maxAttempts,
    agent ? JSON.stringify(freezeAgentWork(node, inst.variables)) : null,
    agent && node.timeoutMinutes ? node.timeoutMinutes * 60 : null,
  ]);
  if (last?.sent) last.sent.push(insert);
  else await insert;
  return id;
}

/**
 * What follows an instance's row saying COMPLETED at end node `nodeId` (written by enterNode or by the
 * completion's own update): INSTANCE_COMPLETED, and a delegated child's parent task learns of it.
 */
export async function instanceEnded(
  tx: Tx,
  inst: ProcessInstanceRow,
  nodeId: string,
  actor: string,
  last?: LastWrites,
): Promise<void> {
  const { record } = writerFor(tx, last);
  await record({
    projectId: inst.projectId,
    processInstanceId: inst.id,
    actor,
    eventType: 'INSTANCE_COMPLETED',
    data: { nodeId },
  });
  if (inst.parentTaskId) await enqueueChildDone(tx, inst.id);
}

/** The agent profile an agent node's task carries, its prompt and inputs interpolated from the variables. */
function freezeAgentWork(node: AgentNode, vars: Record<string, unknown>): AgentWork {
  return {
    profileVersion: AGENT_PROFILE_VERSION,
    model: node.model,
    fallbackModels: node.fallbackModels,
    prompt: String(interpolate(node.prompt, vars)),
    inputs: Object.fromEntries(Object.entries(node.inputs).map(([k, t]) => [k, interpolate(t, vars)])),
    resultVariable: node.resultVariable,
    outputSchema: node.outputSchema,
    confidenceThreshold: node.confidenceThreshold,
    limits: node.limits,
    toolBindings: node.bindings,
    onInvalidOutput: node.onInvalidOutput,
    onLowConfidence: node.onLowConfidence,
  };
}

/** Delegation: the parent's task learns of the child's end through an idempotent CHILD_DONE job. */
export async function enqueueChildDone(tx: Tx, childInstanceId: string) {
  await tx.execute(
    sql`INSERT INTO jobs (kind, dedupe_key, payload) VALUES ('CHILD_DONE', ${`child-done:${childInstanceId}`}, ${JSON.stringify({ childInstanceId })}::jsonb)
        ON CONFLICT (dedupe_key) DO NOTHING`,
  );
  await notify(tx, { type: 'job', kind: 'CHILD_DONE' });
}
