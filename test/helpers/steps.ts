/** Journal step inputs for engine tests that journal as a worker does (journalSteps, group commit). */
import type { TestEngine } from './engine.js';
import type { Locked, WorkerSim } from './worker-sim.js';

export const BATCH = `mutation($input: JournalStepsInput!) { journalSteps(input: $input) {
  idempotencyKey reused taskState step { sequence state digest } } }`;

/** A model call step at `sequence` (COMPLETED carries an answer and its usage). */
export const modelStep = (sequence: number, state: string) => ({
  sequence,
  kind: 'MODEL_CALL',
  state,
  model: 'gemini-3.6-flash',
  request: { model: 'gemini-3.6-flash', messagesHash: `h${sequence}` },
  ...(state === 'COMPLETED'
    ? { response: { role: 'assistant' }, usage: { inputTokens: 10, outputTokens: 5 } }
    : {}),
});

/** A tool call step at `sequence` (COMPLETED carries `{ ok: true }`). */
export const toolStep = (
  sequence: number,
  state: string,
  toolRef: string,
  args: Record<string, unknown>,
) => ({
  sequence,
  kind: 'TOOL_CALL',
  state,
  toolRef,
  request: { callId: `c${sequence}`, arguments: args },
  ...(state === 'COMPLETED' ? { response: { ok: true } } : {}),
});

/** journalSteps of `steps` for the task, as the worker `w`. */
export const batchOf = (engine: TestEngine, w: WorkerSim) => (t: Locked, steps: unknown[]) =>
  engine.gql(w.token, BATCH, { input: { taskId: t.id, workerId: w.workerId, attempt: t.attempt, steps } });
