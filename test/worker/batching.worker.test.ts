/**
 * Batched journaling: the worker holds step ends (COMPLETED / FAILED) back and sends them with the next
 * step's entry in one `journalSteps` request; a read goes out while only lossless ends are held (a
 * model's or a read's answer), and the last end travels with `completeTask`. A counting proxy between a
 * real worker process and the engine sees every journal request: seed 002's story takes 4 journal
 * requests and a completion carrying the last end, instead of 9 and a completion, and the journal, its
 * history and the conversation the model sees are the same as with one request per entry. A batch
 * refused because of its last step (LIMIT_EXCEEDED on the next model call) still journals the ends
 * before the attempt fails.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../server/client/index.js';
import { supportTriageScript } from '../../server/demo/scripts.js';
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

/** What one journal request carried, and the engine's refusal when there was one. */
interface JournalRequest {
  operation: 'journalStep' | 'journalSteps' | 'completeTask';
  steps: string[];
  refused?: { code: string; index?: number };
}

/** Forwards every request to the engine and records the journal requests among them. */
async function journalCounter(target: string) {
  const requests: JournalRequest[] = [];
  const engine = createClient({ url: target });
  const server = http.createServer((req, res) => {
    forward(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502);
      res.end(); // the engine went away (the harness closing under a long poll)
    });
  });
  const forward = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    // The worker only POSTs to /graphql; the body is forwarded unread (the client's raw escape).
    const upstream = await engine.raw(body.toString('utf8'), {
      headers: { authorization: req.headers.authorization ?? '' },
      timeoutMs: 0, // long polls last as long as the worker asked
    });
    const answer = Buffer.from(upstream.text, 'utf8');
    const sent = JSON.parse(body.toString('utf8')) as GqlRequest;
    const operation = sent?.query.match(
      /\b(journalSteps?|completeTask)\s*\(/,
    )?.[1] as JournalRequest['operation'];
    if (operation) {
      const input = sent!.variables.input;
      const steps = (operation === 'journalStep' ? [input] : (input.steps ?? [])).map(
        (s) => `${s.sequence}:${s.state}`,
      );
      const error = (JSON.parse(answer.toString('utf8')) as { errors?: GqlError[] }).errors?.[0];
      requests.push({
        operation,
        steps,
        ...(error
          ? { refused: { code: error.extensions.code, index: error.extensions.index as number } }
          : {}),
      });
    }
    res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(answer);
  };
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

interface GqlRequest {
  query: string;
  variables: { input: { sequence: number; state: string; steps?: { sequence: number; state: string }[] } };
}
interface GqlError {
  extensions: { code: string; index?: unknown };
}

const LIMITED = `
---
kind: Process
key: one-turn-triage
variables: { customerId: { type: string, required: true }, message: { type: string } }
start: triage
nodes:
  - id: triage
    type: agent
    model: gemini-3.6-flash
    prompt: Read the message from \${customerId}, look the customer up, open a ticket and answer in JSON.
    inputs:
      customerId: \${customerId}
      message: \${message}
    tools: [crm/get_customer, crm/create_ticket]
    result_variable: triage
    max_attempts: 1
    limits: { max_turns: 1 }
    next: done
  - { id: done, type: end }
`;

let h: Harness;
let counter: Awaited<ReturnType<typeof journalCounter>>;
const procs: WorkerProcess[] = [];

beforeAll(async () => {
  h = await startHarness({ script: supportTriageScript, extraSource: LIMITED });
  counter = await journalCounter(h.engine.url);
});
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await counter?.close();
  await h?.close();
});

const ALICE = { customerId: 'C-42', message: 'My parcel never arrived' };

async function runToEnd(key: string) {
  counter.requests.length = 0;
  h.crm.reset();
  h.model.reset();
  const w = spawnWorker(h, `worker-batch-${key}`, { ABADA_URL: counter.url });
  procs.push(w);
  const id = await startProcess(h, key, ALICE);
  const inst = await waitFor(`${key} to end`, async () => {
    const i = await instance(h, id);
    const t = i.tasks.find((x) => x.nodeId === 'triage');
    // a completed task's result reaches the instance's variables as the token moves on
    if (t?.state === 'COMPLETED') return i.variables.triage !== undefined ? i : null;
    return t?.state === 'FAILED' ? i : null;
  });
  w.kill('SIGTERM');
  await w.exited;
  return { inst, task: inst.tasks.find((t) => t.nodeId === 'triage')! };
}

describe('batched journaling', () => {
  it('journals seed 002 in 4 requests and the completion instead of 9, with the same journal, history and conversation', async () => {
    const { inst, task } = await runToEnd('support-triage');
    expect(task.state).toBe('COMPLETED');
    expect(h.model.callCount).toBe(3);
    expect(h.crm.countSideEffects('create_ticket')).toBe(1);
    // the journal and its history: every entry, in the order of one request per entry
    expect(journalOf(task)).toEqual([
      '1.1:MODEL_CALL:COMPLETED',
      '1.2:TOOL_CALL:COMPLETED',
      '1.3:MODEL_CALL:COMPLETED',
      '1.4:TOOL_CALL:COMPLETED',
      '1.5:MODEL_CALL:COMPLETED',
    ]);
    const entries = inst.history
      .filter((e) => e.eventType.startsWith('STEP_') && e.actor.startsWith('worker:'))
      .map((e) => `${e.sequence}:${e.eventType.slice('STEP_'.length)}`);
    expect(entries).toEqual([
      '1:STARTED',
      '1:COMPLETED',
      '2:COMPLETED',
      '3:STARTED',
      '3:COMPLETED',
      '4:STARTED',
      '4:COMPLETED',
      '5:STARTED',
      '5:COMPLETED',
    ]);
    // One request per entry would be 9 (and the completion). Ends travel with the next entry: the model's
    // answer waits through the read (both can be asked again), a write's end never waits through a call,
    // and the last model answer travels with completeTask.
    expect(counter.requests.map((r) => [r.operation, r.steps])).toEqual([
      ['journalStep', ['1:STARTED']],
      ['journalSteps', ['1:COMPLETED', '2:COMPLETED', '3:STARTED']],
      ['journalSteps', ['3:COMPLETED', '4:STARTED']],
      ['journalSteps', ['4:COMPLETED', '5:STARTED']],
      ['completeTask', ['5:COMPLETED']],
    ]);
    expect(counter.requests.length).toBeLessThan(entries.length);
    expect(counter.requests.every((r) => !r.refused)).toBe(true);
    // the conversation: the last turn saw the read's and the write's answers as tool messages
    const last = h.model.calls[2].messages;
    expect(last.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(String(last[3].content)).toContain('C-42');
    expect(String(last[5].content)).toContain((inst.variables.triage as { ticketId: string }).ticketId);
  }, 40_000);

  it('a batch refused for its last step journals the ends alone, then fails as before (LIMIT_EXCEEDED)', async () => {
    const { task } = await runToEnd('one-turn-triage');
    expect(task.state).toBe('FAILED');
    expect(task.errorType).toBe('LIMIT_EXCEEDED');
    expect(journalOf(task)).toEqual(['1.1:MODEL_CALL:COMPLETED', '1.2:TOOL_CALL:COMPLETED']);
    expect(h.model.callCount).toBe(1);
    expect(counter.requests).toEqual([
      { operation: 'journalStep', steps: ['1:STARTED'] },
      {
        operation: 'journalSteps',
        steps: ['1:COMPLETED', '2:COMPLETED', '3:STARTED'],
        refused: { code: 'LIMIT_EXCEEDED', index: 2 },
      },
      { operation: 'journalSteps', steps: ['1:COMPLETED', '2:COMPLETED'] },
      { operation: 'journalStep', steps: ['3:STARTED'], refused: { code: 'LIMIT_EXCEEDED' } },
    ]);
  }, 40_000);
});
