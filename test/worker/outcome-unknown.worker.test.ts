/**
 * An interrupted keyless write with real worker processes (docs/decisions.md, "an interrupted keyless
 * write"): the agent calls crm/send_email (`idempotency: none`, the CRM ignores keys) and its worker is
 * SIGKILLed while the e-mail is in flight. When the lease lapses, another worker does NOT re-send it: the
 * step becomes OUTCOME_UNKNOWN, a TOOL_OUTCOME_UNKNOWN incident opens and the task waits. A person then
 * states what happened (resolveIncident); the task reopens on the same attempt and the model reads the
 * person's statement as the call's answer. `happened: true` → one e-mail in all; `happened: false` → the
 * model retries, a new journaled step and a new call (one lost, one sent).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastResult, parseJson, type Script, toolResults, userInput } from '../../server/demo/scripts.js';
import { codeOf } from '../helpers/engine.js';
import {
  type Harness,
  instance,
  journalOf,
  spawnWorker,
  startHarness,
  startProcess,
  waitFor,
  type WorkerProcess,
} from './helpers.js';

const WELCOME = `---
kind: Process
key: welcome-email
variables: { customerId: { type: string, required: true }, email: { type: string, required: true } }
start: greet
nodes:
  - id: greet
    type: agent
    model: gpt-4.1-mini
    prompt: Send a welcome e-mail to \${email} and answer in JSON.
    inputs:
      customerId: \${customerId}
      email: \${email}
    tools: [crm/send_email]
    result_variable: greeting
    max_attempts: 2
    next: done
  - { id: done, type: end }
`;

/**
 * send_email once; when the answer says it did not take effect, send it again (once); then answer with
 * the messageId of the e-mail that went out. A pure function of the conversation, like every script.
 */
const welcomeScript: Script = ({ messages }) => {
  const to = userInput(messages, 'email') ?? 'nobody@example.com';
  const send = {
    name: 'crm__send_email',
    arguments: { to, subject: 'Welcome', body: 'Welcome aboard!' },
  };
  const sends = toolResults(messages).filter((r) => r.name === 'crm__send_email');
  const last = lastResult(messages, 'crm__send_email');
  if (!last) return { toolCalls: [send] };
  if (last.content.startsWith('Not done:')) {
    if (sends.length < 2) return { toolCalls: [send] };
    return { content: JSON.stringify({ emailed: false, _confidence: 40 }) };
  }
  // The tool's answer, or a person's statement with the result first: the messageId either way.
  const result = parseJson(last.content.split('\n\n')[0]);
  return {
    content: JSON.stringify({ emailed: true, messageId: result?.messageId ?? null, _confidence: 90 }),
  };
};

const INCIDENTS = `query { incidents(state: OPEN) { edges { node { id type state taskId attempt sequence message } } } }`;
const RESOLVE = `mutation($input: ResolveIncidentInput!) { resolveIncident(input: $input) { id state type resolution } }`;

interface Incident {
  id: string;
  type: string;
  state: string;
  taskId: string | null;
  attempt: number | null;
  sequence: number | null;
  message: string;
}

let h: Harness;
let personToken: string;
const procs: WorkerProcess[] = [];

beforeAll(async () => {
  h = await startHarness({ script: welcomeScript, extraSource: WELCOME });
  personToken = await h.engine.principal('HUMAN', 'ops-oncall', { groups: ['ops'] });
});
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await h?.close();
});

/**
 * How long B is watched not getting the failed task (a negative: nothing can signal "never"). B's long
 * polls last ABADA_WORKER_POLL_MS (2000 below) and any poll that could claim the task claims it when it
 * starts or is woken, so 2.5 s holds at least one whole poll begun after the incident, and outlasts a
 * lease (1500 below) that would have put the task back in play.
 */
const NEVER_HANDED_MS = 2500;

const spawn = (id: string) => {
  const w = spawnWorker(h, id, { ABADA_WORKER_LOCK_MS: '1500', ABADA_WORKER_POLL_MS: '2000' });
  procs.push(w);
  return w;
};

/**
 * Worker A is killed while send_email is in flight; worker B, once the lease lapsed, must leave the call
 * alone: OUTCOME_UNKNOWN, an open incident, the task waiting FAILED. Returns B, the task and the incident.
 */
async function interruptSendEmail(tag: string) {
  h.crm.reset();
  h.model.reset();
  h.crm.setDelay('send_email', 15_000, 1);
  const a = spawn(`worker-${tag}-a`);
  const id = await startProcess(h, 'welcome-email', { customerId: 'C-42', email: 'alice@example.com' });
  await waitFor('send_email to be in flight', () => h.crm.countCalls('send_email') === 1);
  a.kill('SIGKILL');
  await a.exited;
  let task = (await instance(h, id)).tasks.find((t) => t.nodeId === 'greet')!;
  expect(journalOf(task)).toEqual(['1.1:MODEL_CALL:COMPLETED', '1.2:TOOL_CALL:STARTED']);
  expect(task.steps[1]).toMatchObject({ toolRef: 'crm/send_email', idempotencyKey: null });

  const b = spawn(`worker-${tag}-b`);
  const inc = await waitFor('a TOOL_OUTCOME_UNKNOWN incident', async () => {
    const r = await h.engine.ok<{ incidents: { edges: { node: Incident }[] } }>(
      h.engine.adminToken,
      INCIDENTS,
    );
    return r.incidents.edges
      .map((e) => e.node)
      .find((n) => n.taskId === task.id && n.type === 'TOOL_OUTCOME_UNKNOWN');
  });
  expect(inc).toMatchObject({ state: 'OPEN', attempt: 1, sequence: 2 });
  expect(inc.message).toContain('crm/send_email');
  // B keeps polling for a while: the task is never handed to it.
  await new Promise((r) => setTimeout(r, NEVER_HANDED_MS));
  const inst = await instance(h, id);
  task = inst.tasks.find((t) => t.nodeId === 'greet')!;
  expect(task).toMatchObject({ state: 'FAILED', attempt: 1, errorType: 'TOOL_OUTCOME_UNKNOWN' });
  expect(journalOf(task)).toEqual(['1.1:MODEL_CALL:COMPLETED', '1.2:TOOL_CALL:OUTCOME_UNKNOWN']);
  expect(inst.history.map((e) => e.eventType)).toEqual(
    expect.arrayContaining(['STEP_OUTCOME_UNKNOWN', 'INCIDENT_OPENED']),
  );
  expect(h.crm.countCalls('send_email')).toBe(1);
  expect(h.model.callCount).toBe(1);
  expect(b.logs.some((l) => l.taskId === task.id)).toBe(false);
  // Nobody but a person states the fact: not a worker, and not without saying whether it happened.
  expect(
    codeOf(
      await h.engine.gql(h.workerToken, RESOLVE, { input: { id: inc.id, comment: 'x', happened: true } }),
    ),
  ).toBe('FORBIDDEN');
  expect(
    codeOf(await h.engine.gql(personToken, RESOLVE, { input: { id: inc.id, comment: 'checked' } })),
  ).toBe('VALIDATION_FAILED');
  return { id, b, taskId: task.id, incidentId: inc.id };
}

const completed = (id: string) =>
  waitFor(
    'the instance to complete',
    async () => {
      const i = await instance(h, id);
      return i.state === 'COMPLETED' ? i : null;
    },
    30_000,
  );

/** The tool message answering `callId` in the model's last request. */
const toolMessage = (callId: string) =>
  h.model.calls.at(-1)!.messages.find((m) => m.role === 'tool' && m.tool_call_id === callId)?.content;

describe('an interrupted keyless write with real workers', () => {
  it('is never re-sent; a person says it happened, the model reads their result, one e-mail in all', async () => {
    const { id, b, taskId, incidentId } = await interruptSendEmail('happened');
    const sent = h.crm.calls[0].result as { messageId: string };
    expect(sent.messageId).toMatch(/^M-\d+$/);

    const comment = 'The CRM outbox shows the welcome e-mail went out.';
    const r = await h.engine.ok(personToken, RESOLVE, {
      input: { id: incidentId, comment, happened: true, result: sent },
    });
    expect(r.resolveIncident).toMatchObject({ state: 'RESOLVED', resolution: { happened: true, comment } });

    const inst = await completed(id);
    expect(inst.variables.greeting).toEqual({ emailed: true, messageId: sent.messageId });
    expect(h.crm.countCalls('send_email')).toBe(1);
    expect(h.crm.countSideEffects('send_email')).toBe(1);
    expect(h.model.callCount).toBe(2);
    // The rebuilt conversation: the journaled assistant turn, then the person's statement as the answer.
    const messages = h.model.calls[1].messages;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(messages[2].tool_calls?.map((c) => c.id)).toEqual(['call_1']);
    expect(toolMessage('call_1')).toBe(
      `${JSON.stringify(sent)}\n\nNote: this call's answer was lost when the work was interrupted; ` +
        `a person checked and confirmed that it took effect, with the result above. Their comment: ${comment}`,
    );

    const task = inst.tasks.find((t) => t.id === taskId)!;
    expect(task).toMatchObject({ state: 'COMPLETED', attempt: 1, workerId: b.workerId });
    expect(journalOf(task)).toEqual([
      '1.1:MODEL_CALL:COMPLETED',
      '1.2:TOOL_CALL:OUTCOME_UNKNOWN',
      '1.3:MODEL_CALL:COMPLETED',
    ]);
    expect(task.steps[1]).toMatchObject({
      comment,
      response: { resolvedByPerson: true, happened: true, result: sent, comment },
    });
    const events = inst.history.map((e) => e.eventType);
    expect(events).toEqual(expect.arrayContaining(['INCIDENT_RESOLVED', 'TASK_REOPENED']));
    expect(inst.history.find((e) => e.eventType === 'INCIDENT_RESOLVED')!.actor).toMatch(
      /^human:ops-oncall#/,
    );
    // B replayed step 2 from the journal and never called the tool.
    expect(
      b.logs.some((l) => l.event === 'tool.done' && l.sequence === 2 && l.state === 'OUTCOME_UNKNOWN'),
    ).toBe(true);
    expect(b.logs.some((l) => l.event === 'tool.called')).toBe(false);
    b.kill('SIGTERM');
    expect((await b.exited).code).toBe(0);
  }, 60_000);

  it('a person says it did not happen: the model is told so and its retry is a new step and a new call', async () => {
    const { id, b, taskId, incidentId } = await interruptSendEmail('lost');
    const comment = 'Nothing in the CRM outbox; the e-mail was lost.';
    await h.engine.ok(personToken, RESOLVE, { input: { id: incidentId, comment, happened: false } });

    const inst = await completed(id);
    // One lost (the person found no trace of it), one sent by the retry.
    expect(h.crm.countCalls('send_email')).toBe(2);
    const second = h.crm.calls[1];
    expect(second).toMatchObject({ tool: 'send_email', status: 'ok', headerKey: null, metaKey: null });
    const resent = second.result as { messageId: string };
    expect(inst.variables.greeting).toEqual({ emailed: true, messageId: resent.messageId });
    expect(h.model.callCount).toBe(3);
    const notDone = `Not done: this call was interrupted and a person checked that it did not take effect. Their comment: ${comment}`;
    expect(
      h.model.calls[1].messages.find((m) => m.role === 'tool' && m.tool_call_id === 'call_1')?.content,
    ).toBe(notDone);
    // The last request carries both answers: the person's statement, then the retry's real result.
    expect(toolMessage('call_1')).toBe(notDone);
    expect(toolMessage('call_2')).toBe(JSON.stringify(resent));

    const task = inst.tasks.find((t) => t.id === taskId)!;
    expect(task).toMatchObject({ state: 'COMPLETED', attempt: 1 });
    expect(journalOf(task)).toEqual([
      '1.1:MODEL_CALL:COMPLETED',
      '1.2:TOOL_CALL:OUTCOME_UNKNOWN',
      '1.3:MODEL_CALL:COMPLETED',
      '1.4:TOOL_CALL:COMPLETED',
      '1.5:MODEL_CALL:COMPLETED',
    ]);
    expect(task.steps[1].response).toEqual({ resolvedByPerson: true, happened: false, comment });
    expect(task.steps[3]).toMatchObject({
      toolRef: 'crm/send_email',
      idempotencyKey: null,
      response: resent,
    });
    expect(b.logs.filter((l) => l.event === 'tool.called').map((l) => l.sequence)).toEqual([4]);
    b.kill('SIGTERM');
    expect((await b.exited).code).toBe(0);
  }, 60_000);
});
