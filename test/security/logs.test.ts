/**
 * The engine's own logs (pino, at debug level) never carry a prompt, a secret, a token or tool payloads,
 * even when calls fail: an engine process is run as a child, a refund story is played through it with
 * refusals on the way, and everything it printed is searched.
 */
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProc, gqlClient, spawnEngine } from '../../bench/lib.js';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_KEY } from '../helpers/engine.js';
import { CRM_SERVER, Q, REFUND } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';

const SECRET = 'sk-crm-LOGCHECK-91a7';
const ADMIN = 'admin-LOGCHECK-5c2e1f';
const PROMPT_MARK = 'refund a lost parcel if it is due';
const ARG_MARK = 'ORDER-LOGCHECK-7731';

let engine: EngineProc;
let output = '';

beforeAll(async () => {
  const databaseUrl = await createTestDatabase();
  engine = await spawnEngine({
    DATABASE_URL: databaseUrl,
    ABADA_ENCRYPTION_KEY: TEST_KEY,
    ABADA_ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'debug',
    HOST: '127.0.0.1',
  });
  engine.child.stdout!.on('data', (d) => {
    output += String(d);
  });
  engine.child.stderr?.on('data', (d) => {
    output += String(d);
  });
});
afterAll(() => engine?.stop());

describe('engine logs', () => {
  it('name the work but never its content', async () => {
    const admin = gqlClient(engine.url, ADMIN);
    await admin(print(Q.deploy), { s: `${CRM_SERVER()}---${REFUND}` });
    await admin('mutation($s: String!) { setCredential(name: "crm-token", secret: $s) }', { s: SECRET });
    const { createPrincipal } = await admin(
      'mutation { createPrincipal(input: {kind: WORKER, name: "w", topics: ["abada:agent"]}) { token } }',
    );
    const workerToken = createPrincipal.token as string;
    const worker = gqlClient(engine.url, workerToken);
    const inst = (await admin(print(Q.start), { key: 'refund', v: { customerId: 'C-42', message: 'lost' } }))
      .startProcess;
    const [t] = (
      await worker(print(Q.fetch), {
        input: {
          workerId: 'w1',
          maxTasks: 1,
          topics: [{ topicName: 'abada:agent', lockDurationMs: 30_000 }],
        },
      })
    ).fetchAndLock;
    expect(t.agentWork.prompt).toContain(PROMPT_MARK);
    await worker('query($t: ID!) { toolCredential(taskId: $t, server: "crm", workerId: "w1") { secret } }', {
      t: t.id,
    });
    const journal = (sequence: number, state: string, extra: Record<string, unknown>) =>
      worker(print(Q.journal), {
        input: { taskId: t.id, workerId: 'w1', attempt: 1, sequence, state, ...extra },
      });
    await journal(1, 'STARTED', {
      kind: 'MODEL_CALL',
      model: 'gemini-3.6-flash',
      request: { model: 'gemini-3.6-flash', messagesHash: 'x' },
    });
    await journal(1, 'COMPLETED', {
      kind: 'MODEL_CALL',
      model: 'gemini-3.6-flash',
      request: { model: 'gemini-3.6-flash', messagesHash: 'x' },
      response: { content: PROMPT_MARK },
    });
    const args = { orderId: ARG_MARK, amount: 89, currency: 'EUR' };
    // refused calls are logged too: a STARTED without approval, a divergent replay
    await expect(
      journal(2, 'STARTED', {
        kind: 'TOOL_CALL',
        toolRef: 'crm/refund',
        request: { callId: 'c', arguments: args },
      }),
    ).rejects.toThrow(/APPROVAL_REQUIRED/);
    await journal(2, 'PROPOSED', {
      kind: 'TOOL_CALL',
      toolRef: 'crm/refund',
      request: { callId: 'c', arguments: args },
    });
    await expect(
      worker('{ me { id } }').then(() => gqlClient(engine.url, `${workerToken}x`)('{ me { id } }')),
    ).rejects.toThrow();
    expect(inst.id).toBeTruthy();
    // One last command as a marker (its first extendLock): the engine writes its log in order, so once
    // the marker's line is here, every line of the calls above is too.
    // (refused, LEASE_NOT_HELD: the task awaits approval; refusals are logged all the same)
    await worker('mutation($i: ExtendLockInput!) { extendLock(input: $i) { id } }', {
      i: { taskId: t.id, workerId: 'w1', lockDurationMs: 30_000, attempt: 1 },
    }).catch(() => {});
    await waitFor('the log line of the marker command', () => output.includes('"command":"extendLock"'));
    expect(output).toContain('"command":"journalStep"');
    // a worker's routine command that succeeded is logged at debug (and its entry is built only then)
    const routine = output
      .split('\n')
      .filter((l) => l.includes('"command":"journalStep"') && !l.includes('"code"'));
    expect(routine.length).toBeGreaterThan(0);
    for (const line of routine) expect(line).toContain('"level":"debug"');
    for (const mark of [SECRET, ADMIN, workerToken, PROMPT_MARK, ARG_MARK])
      expect(output, mark).not.toContain(mark);
  });
});
