/**
 * Process instances: starting one and a single token moving through agent, service, user_task and end
 * nodes. Lock order everywhere: external task(s) → approval → instance. Cancellation, suspension and
 * resumption live in lifecycle.ts.
 */
import { eq, sql } from 'drizzle-orm';
import { externalTasks, processInstances, userTasks, type ProcessInstanceRow } from '../../db/schema.js';
import { EngineError, notFound } from '../../errors.js';
import {
  type AgentNode,
  type FrozenProcess,
  type ProcessNode,
  type VariableSpec,
  AGENT_PROFILE_VERSION,
  type AgentWork,
  latestDefinition,
} from '../definitions/index.js';
import {
  type Actor,
  type EngineContext,
  type EngineEvent,
  type Executor,
  type StreamPayload,
  type Tx,
  actorProject,
  isUuid,
  sameProject,
} from '../common/index.js';
import { notify } from '../events/index.js';
import { actorLabel, appendHistory, type HistoryEntry } from '../history/index.js';
import type { JsonObject } from '../../shared/types.js';
import { startInstanceTrace } from '../../telemetry/index.js';
import { type LastWrites, writeLast } from './last-writes.js';
import { type InstanceView, instanceView } from './views.js';
import { transaction } from '../../db/pg.js';

const TEMPLATE_RE = /\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}/g;

/** `${var}` interpolation: a template that is exactly one reference keeps the variable's type. */
export function interpolate(template: string, vars: Record<string, unknown>): unknown {
  const whole = /^\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}$/.exec(template);
  if (whole) return vars[whole[1]] ?? null;
  return template.replace(TEMPLATE_RE, (_, name: string) => {
    const v = vars[name];
    if (v === undefined || v === null) return '';
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
}

function typeOk(spec: VariableSpec, v: unknown): boolean {
  switch (spec.type) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'integer':
      return Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
  }
}

/** Checks variables against the declared ones; returns the list of problems (empty = fine). */
export function checkVariables(
  declared: Record<string, VariableSpec>,
  vars: unknown,
): { path: string; message: string }[] {
  const errors: { path: string; message: string }[] = [];
  if (typeof vars !== 'object' || vars === null || Array.isArray(vars)) {
    return [{ path: 'variables', message: 'variables must be a JSON object' }];
  }
  const v = vars as Record<string, unknown>;
  for (const [name, spec] of Object.entries(declared)) {
    if (v[name] === undefined || v[name] === null) {
      if (spec.required)
        errors.push({ path: `variables.${name}`, message: `required ${spec.type} "${name}" is missing` });
    } else if (!typeOk(spec, v[name])) {
      errors.push({ path: `variables.${name}`, message: `"${name}" must be of type ${spec.type}` });
    }
  }
  for (const name of Object.keys(v)) {
    if (!(name in declared))
      errors.push({ path: `variables.${name}`, message: `"${name}" is not a declared variable` });
  }
  return errors;
}

export interface StartInput {
  key: string;
  variables?: unknown;
  businessKey?: string | null;
}

/** Starts an instance of the latest version of a process and moves its token to the start node. */
export async function startProcess(
  ctx: EngineContext,
  actor: Actor,
  input: StartInput,
): Promise<InstanceView> {
  if (actor.kind === 'WORKER')
    throw new EngineError('FORBIDDEN', 'A worker credential cannot start processes.');
  const projectId = actorProject(actor);
  return transaction(ctx.db, async (tx) =>
    startInstanceTx(tx, ctx, {
      projectId,
      key: input.key,
      variables: input.variables ?? {},
      businessKey: input.businessKey ?? null,
      startedBy: actor.principalId,
      actor: actorLabel(actor),
    }),
  ).then(instanceView);
}

export interface StartInstanceArgs {
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

export async function startInstanceTx(
  tx: Tx,
  _ctx: EngineContext,
  a: StartInstanceArgs,
): Promise<ProcessInstanceRow> {
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
  const [inst] = await tx
    .insert(processInstances)
    .values({
      projectId: a.projectId,
      definitionId: def.id,
      key: def.key,
      version: def.version,
      state: 'ACTIVE',
      currentNodeId: def.spec.start,
      // checkVariables above proved it a JSON object
      variables: a.variables as JsonObject,
      businessKey: a.businessKey,
      startedBy: a.startedBy,
      parentTaskId: a.parentTaskId ?? null,
      parentSequence: a.parentSequence ?? null,
      parentAttempt: a.parentAttempt ?? null,
      depth: a.depth ?? 0,
      traceparent: traced?.traceparent ?? null,
    })
    .returning();
  traced?.end(inst.id);
  // INSTANCE_STARTED and what entering the start node writes go out together, in order, with its
  // notices: one statement (last-writes.ts)
  const last: LastWrites = {
    history: [
      {
        projectId: a.projectId,
        processInstanceId: inst.id,
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
  };
  const entered = await enterNode(tx, inst, def.spec, def.spec.start, 'engine', last, true);
  await writeLast(tx, last);
  return entered;
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

/**
 * Moves the token onto `nodeId` and creates the work it needs; `end` completes the instance. With
 * `last`, its history rows and task notices are left there for the caller's last statement.
 * `inserted`: the instance row was inserted at this node by this transaction, so it already says so
 * (and its updated_at is this transaction's now()): it is not updated again.
 */
export async function enterNode(
  tx: Tx,
  inst: ProcessInstanceRow,
  spec: FrozenProcess,
  nodeId: string,
  actor: string,
  last?: LastWrites,
  inserted = false,
): Promise<ProcessInstanceRow> {
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
      ? [inst]
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
  const agentWork = node.type === 'agent' ? freezeAgentWork(node, inst.variables) : null;
  const [task] = await tx
    .insert(externalTasks)
    .values({
      projectId: inst.projectId,
      processInstanceId: inst.id,
      nodeId: node.id,
      nodeType: node.type,
      topicName: node.topic,
      state: 'OPEN',
      priority: node.priority,
      maxAttempts: node.maxAttempts,
      agentWork,
      boundaryAt: node.type === 'agent' ? boundaryAt(node) : null,
    })
    .returning({ id: externalTasks.id });
  await record({
    ...base,
    eventType: 'TASK_CREATED',
    taskId: task.id,
    attempt: 1,
    data: { nodeId: node.id, topic: node.topic },
  });
  await announce({
    type: 'task',
    taskId: task.id,
    processInstanceId: inst.id,
    projectId: inst.projectId,
    state: 'OPEN',
    topic: node.topic,
  });
  return moved;
}

/**
 * What follows an instance's row saying COMPLETED at end node `nodeId` (enterNode, or a command that
 * wrote the end with its own update, as the completion does): INSTANCE_COMPLETED, and a delegated
 * child's parent task learns of it.
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

/** When an agent node entered now times out (SPEC §15.4), by the database clock; null without a timeout. */
function boundaryAt(node: AgentNode) {
  return node.timeoutMinutes ? sql`now() + make_interval(secs => ${node.timeoutMinutes * 60})` : null;
}

/** Delegation: the parent's task learns of the child's end through an idempotent CHILD_DONE job. */
export async function enqueueChildDone(tx: Tx, childInstanceId: string) {
  await tx.execute(
    sql`INSERT INTO jobs (kind, dedupe_key, payload) VALUES ('CHILD_DONE', ${`child-done:${childInstanceId}`}, ${JSON.stringify({ childInstanceId })}::jsonb)
        ON CONFLICT (dedupe_key) DO NOTHING`,
  );
  await notify(tx, { type: 'job', kind: 'CHILD_DONE' });
}

/** Loads an instance the actor may see, or throws NOT_FOUND (never revealing other projects' ids). */
export async function getInstance(ex: Executor, actor: Actor, id: string): Promise<ProcessInstanceRow> {
  if (!isUuid(id)) throw notFound('process instance', id);
  const [row] = await ex.select().from(processInstances).where(eq(processInstances.id, id)).limit(1);
  if (!row || !sameProject(actor, row.projectId)) throw notFound('process instance', id);
  return row;
}

/** Merges variables written by a completed task into the instance (top-level keys replace). */
export async function mergeVariables(
  tx: Tx,
  instanceId: string,
  vars: Record<string, unknown>,
): Promise<ProcessInstanceRow> {
  const [updated] = await tx
    .update(processInstances)
    .set({
      variables: sql`${processInstances.variables} || ${JSON.stringify(vars)}::jsonb`,
      updatedAt: sql`now()`,
    })
    .where(eq(processInstances.id, instanceId))
    .returning();
  return updated;
}
