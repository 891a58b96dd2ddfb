/**
 * Completion and failure of external tasks (SPEC §3, §7), idempotent per (task, attempt, operation): a
 * re-sent report gets the stored outcome; a stored failure never answers a completion. The output contract
 * is checked in the transaction that stores the variable and moves the token; the model never advances it.
 */
import { Ajv } from 'ajv';
import { and, eq } from 'drizzle-orm';
import { taskReports, type ExternalTaskRow } from '../../db/schema.js';
import { EngineError, invalid } from '../../errors.js';
import { assertLease, attemptHistory, type LockedTaskRow, lockTask } from '../lease/index.js';
import { failTaskAttempt } from './attempt.js';
import { canonicalJson, sha256Hex } from '../../shared/canonical.js';
import type { Actor, EngineContext, Executor, Tx } from '../common/index.js';
import { taskNotice } from '../events/index.js';
import { readDefinitionSpec } from '../definitions/index.js';
import { enterNode, findNode, instanceEnded, type LastWrites } from '../instances/index.js';
import {
  assertNoOpenStep,
  type CompletionTask,
  completeRows,
  lockForCompletion,
  tailStatement,
  writeTail,
} from './completion-sql.js';
import { recordOutcome } from '../workers/index.js';
import type { AttemptMetadata } from '../../shared/types.js';
import { type JournalStepInput, journalSteps, journalThen, type Then } from '../journal/index.js';
import { type TaskView, taskView } from './views.js';
import { transaction } from '../../db/pg.js';
import { COMPLETION_READS_AFTER } from '../../db/statements/tasks.js';

/** The lease a worker's report is about. */
export type LeaseReport = Pick<JournalStepInput, 'taskId' | 'workerId' | 'attempt'>;

export interface CompleteInput extends LeaseReport {
  variables: unknown;
  metadata: AttemptMetadata;
  /**
   * The attempt's last step ends (e.g. the final model call's COMPLETED), journaled first as journalSteps
   * does: one request fewer per task. A re-sent completion re-sends them; the journal sees the same steps.
   */
  steps?: Omit<JournalStepInput, keyof LeaseReport>[] | null;
}

export interface FailInput extends LeaseReport {
  errorType: string;
  errorMessage?: string | null;
  retryTimeoutMs?: number | null;
  metadata?: AttemptMetadata | null;
}

const ajv = new Ajv({ strict: false, allErrors: true });
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

function validatorFor(schema: Record<string, unknown>) {
  const k = canonicalJson(schema);
  let v = validators.get(k);
  if (!v) {
    v = ajv.compile(schema);
    if (validators.size > 1000) validators.clear();
    validators.set(k, v);
  }
  return v;
}

/** Only these metadata fields are kept: a prompt or anything else a worker sends is dropped, never stored. */
function cleanMetadata(m: AttemptMetadata | null | undefined): AttemptMetadata {
  if (!m) return {};
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const str = (v: unknown) => (typeof v === 'string' ? v.slice(0, 200) : null);
  return {
    model: str(m.model),
    provider: str(m.provider),
    attempt: num(m.attempt),
    durationMs: num(m.durationMs),
    tools: Array.isArray(m.tools) ? m.tools.filter((t) => typeof t === 'string').slice(0, 100) : null,
    resultVariable: str(m.resultVariable),
    promptHash:
      typeof m.promptHash === 'string' && /^[0-9a-f]{16,128}$/i.test(m.promptHash) ? m.promptHash : null,
    confidence: num(m.confidence),
    inputTokens: num(m.inputTokens),
    outputTokens: num(m.outputTokens),
  };
}

async function storedReport(tx: Executor, taskId: string, attempt: number, operation: 'complete' | 'fail') {
  const [r] = await tx
    .select()
    .from(taskReports)
    .where(
      and(
        eq(taskReports.taskId, taskId),
        eq(taskReports.attempt, attempt),
        eq(taskReports.operation, operation),
      ),
    );
  return r;
}

export async function completeTask(ctx: EngineContext, actor: Actor, input: CompleteInput) {
  if (actor.kind !== 'WORKER')
    throw new EngineError('FORBIDDEN', 'Only a worker credential can complete tasks.');
  const requestSha = sha256Hex(canonicalJson(input.variables ?? null));
  let result: Awaited<ReturnType<typeof completeIn>> | undefined;
  if (input.steps?.length) {
    const { taskId, workerId, attempt } = input;
    const steps = input.steps.map((st) => ({ ...st, taskId, workerId, attempt }));
    const ran = await journalThen(
      ctx,
      actor,
      steps,
      async (tx, locked) => {
        const task = { ...locked.task, ...locked.after } as CompletionTask;
        const done = await completeIn(tx, actor, input, requestSha, task);
        return { value: done, last: done.tail };
      },
      // the completion's reads, run with the journal's write of the steps
      { statement: COMPLETION_READS_AFTER, values: [taskId, attempt] },
    );
    result = ran?.value;
    if (!result) await journalLastSteps(ctx, actor, steps, requestSha);
  }
  result ??= await transaction(ctx.db, async (tx) => {
    const task = await lockForCompletion(tx, actor, input.taskId, input.attempt);
    const done = await completeIn(tx, actor, input, requestSha, task);
    if (done.tail) await writeTail(tx, done.tail);
    return done;
  });
  // a completion answered from its stored report records the worker's success on its own
  if (!result.tail) await recordOutcome(ctx, actor.principalId, input.workerId, false);
  return taskView(result.row);
}

/**
 * The completion in the caller's transaction on the locked task: the task row, and the last statement
 * for the caller to run (none when it was answered from its stored report).
 */
async function completeIn(
  tx: Tx,
  actor: Actor,
  input: CompleteInput,
  requestSha: string,
  task: CompletionTask,
): Promise<{ row: ExternalTaskRow; tail?: Then }> {
  // A re-sent report (same request) gets the stored outcome; a different one is checked like any other.
  if (task.storedSha === requestSha) return { row: task };
  const { workerId, attempt } = input;
  assertLease(task, actor, workerId, attempt);
  assertNoOpenStep(task);
  const vars = input.variables;
  if (typeof vars !== 'object' || vars === null || Array.isArray(vars)) {
    throw invalid('variables must be a JSON object.', 'variables', 'not an object');
  }
  const metadata = cleanMetadata(input.metadata);
  const outcome =
    task.nodeType === 'agent'
      ? checkAgentOutput(task, vars as Record<string, unknown>, metadata)
      : { kind: 'ok' as const, vars: vars as Record<string, unknown> };
  const who = `worker:${workerId}`;
  const last: LastWrites = { history: [], notices: [] };
  const row =
    outcome.kind === 'fail'
      ? await failTaskAttempt(tx, task, {
          errorType: outcome.errorType,
          errorMessage: outcome.message,
          actor: who,
          metadata: { ...metadata, errorType: outcome.errorType },
        })
      : await finish(tx, task, outcome.vars, metadata, outcome.kind === 'ok' ? null : outcome, who, last);
  const report = { taskId: task.id, workerId, attempt, requestSha, state: row.state };
  return { row, tail: tailStatement(actor, last, report) };
}

/** The steps that travel with a completion; refused as journalSteps refuses, unless already completed. */
async function journalLastSteps(ctx: EngineContext, actor: Actor, steps: JournalStepInput[], sha: string) {
  try {
    await journalSteps(ctx, actor, steps);
  } catch (e) {
    // a re-sent completion whose first send completed the task: the steps were journaled then (its
    // refusal is LEASE_NOT_HELD or the like); any other failure is answered as it is
    if (!(e instanceof EngineError)) throw e;
    const [{ taskId, attempt }] = steps;
    const stored = await storedReport(ctx.db, taskId, attempt, 'complete');
    if (stored?.requestSha256 !== sha) throw e;
  }
}

type OutputCheck =
  | { kind: 'ok'; vars: Record<string, unknown> }
  | {
      kind: 'route';
      vars: Record<string, unknown>;
      to: string;
      reason: 'INVALID_OUTPUT' | 'LOW_CONFIDENCE';
      message: string;
    }
  | { kind: 'fail'; errorType: string; message: string };

/** The output contract: only the result variable, valid against output_schema, confident enough. */
function checkAgentOutput(
  task: LockedTaskRow,
  vars: Record<string, unknown>,
  metadata: AttemptMetadata,
): OutputCheck {
  const work = task.agentWork!;
  const extra = Object.keys(vars).filter((k) => k !== work.resultVariable);
  if (extra.length > 0 || !(work.resultVariable in vars)) {
    throw invalid(
      `An agent task writes exactly one variable, "${work.resultVariable}".`,
      'variables',
      extra.length ? `not allowed: ${extra.join(', ')}` : `missing ${work.resultVariable}`,
    );
  }
  let value = vars[work.resultVariable];
  let confidence = metadata.confidence ?? null;
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && '_confidence' in value) {
    const { _confidence, ...rest } = value as Record<string, unknown>;
    if (typeof _confidence === 'number') confidence = _confidence;
    value = rest;
  }
  metadata.confidence = confidence;
  const out = { [work.resultVariable]: value };
  if (work.outputSchema) {
    const validate = validatorFor(work.outputSchema);
    if (!validate(value)) {
      const message = `output does not match output_schema: ${ajv.errorsText(validate.errors)}`;
      return work.onInvalidOutput
        ? { kind: 'route', vars: out, to: work.onInvalidOutput, reason: 'INVALID_OUTPUT', message }
        : { kind: 'fail', errorType: 'INVALID_MODEL_OUTPUT', message };
    }
  }
  if (work.confidenceThreshold != null && (confidence == null || confidence < work.confidenceThreshold)) {
    const message = `confidence ${confidence ?? 'missing'} is below the threshold ${work.confidenceThreshold}`;
    return work.onLowConfidence
      ? { kind: 'route', vars: out, to: work.onLowConfidence, reason: 'LOW_CONFIDENCE', message }
      : { kind: 'fail', errorType: 'LOW_CONFIDENCE', message };
  }
  return { kind: 'ok', vars: out };
}

/**
 * Stores the variables, completes the task and moves the token (to `next`, or to the route taken); the
 * history rows and task notices are left in `last` for the completion's last statement.
 */
async function finish(
  tx: Tx,
  task: CompletionTask,
  vars: Record<string, unknown>,
  metadata: AttemptMetadata,
  route: Extract<OutputCheck, { kind: 'route' }> | null,
  who: string,
  last: LastWrites,
): Promise<ExternalTaskRow> {
  const spec = await readDefinitionSpec(tx, task.definitionId);
  const nextId = route?.to ?? findNode(spec, task.nodeId).next!;
  const endNodeId = findNode(spec, nextId).type === 'end' ? nextId : null;
  const { row, instance: updated } = await completeRows(tx, task, vars, metadata, endNodeId);
  last.history.push({
    ...attemptHistory(task, who),
    eventType: 'TASK_COMPLETED',
    data: {
      variables: Object.keys(vars),
      variablesSha256: sha256Hex(canonicalJson(vars)),
      confidence: metadata.confidence ?? null,
      promptHash: metadata.promptHash ?? null,
      model: metadata.model ?? null,
      route: route ? { reason: route.reason, to: route.to, message: route.message } : undefined,
    },
  });
  last.notices.push(taskNotice(task, 'COMPLETED'));
  if (endNodeId !== null) await instanceEnded(tx, updated, endNodeId, 'engine', last);
  else await enterNode(tx, updated, spec, nextId, 'engine', last);
  return row;
}

export async function failTask(ctx: EngineContext, actor: Actor, input: FailInput): Promise<TaskView> {
  if (actor.kind !== 'WORKER') throw new EngineError('FORBIDDEN', 'Only a worker credential can fail tasks.');
  if (!input.errorType || !/^[A-Z][A-Z0-9_]{0,63}$/.test(input.errorType)) {
    throw invalid('errorType is an UPPER_SNAKE_CASE code such as MODEL_UNAVAILABLE.', 'errorType', 'invalid');
  }
  const retryMs = input.retryTimeoutMs;
  if (retryMs != null && (!Number.isInteger(retryMs) || retryMs < 0 || retryMs > 86_400_000)) {
    throw invalid('retryTimeoutMs is from 0 to 86400000.', 'retryTimeoutMs', 'out of range');
  }
  const result = await transaction(ctx.db, async (tx) => {
    const task = await lockTask(tx, actor, input.taskId);
    const stored = await storedReport(tx, task.id, input.attempt, 'fail');
    if (stored && stored.requestSha256 === sha256Hex(input.errorType)) return task;
    assertLease(task, actor, input.workerId, input.attempt);
    const row = await failTaskAttempt(tx, task, {
      errorType: input.errorType,
      errorMessage: input.errorMessage?.slice(0, 2000) ?? null,
      retryTimeoutMs: input.retryTimeoutMs,
      actor: `worker:${input.workerId}`,
      metadata: { ...cleanMetadata(input.metadata), errorType: input.errorType },
    });
    await tx.insert(taskReports).values({
      taskId: task.id,
      attempt: input.attempt,
      operation: 'fail',
      requestSha256: sha256Hex(input.errorType),
      outcome: { state: row.state, errorType: input.errorType },
    });
    return row;
  });
  await recordOutcome(ctx, actor.principalId, input.workerId, true);
  return taskView(result);
}
