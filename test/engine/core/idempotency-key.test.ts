/**
 * stepByIdempotencyKey (SPEC §15.6): which instance, task, attempt and step hold a key, how it ended,
 * and its sends as the engine saw them — the STARTED that created the key, each later attempt that
 * reused it, each lease acquired on the attempt while the write was STARTED. Admins and people of the
 * project may ask; a worker may not; an unknown key is null.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { graphql } from '../../../server/client/index.js';
import { codeOf, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q } from '../../helpers/fixtures.js';
import { type Locked, WorkerSim } from '../../helpers/worker-sim.js';
import { runToWrite, startTriage, TICKET, triageProcess } from './helpers.js';

const BY_KEY = graphql(`
  query($key: String!) {
    stepByIdempotencyKey(key: $key) {
      key processInstanceId taskId attempt sequence toolRef outcome
      steps { attempt sequence state reused idempotencyKey }
      sends { reason attempt sequence at workerId }
    }
  }
`);

const engines: TestEngine[] = [];
afterAll(() => Promise.all(engines.map((e) => e.close())));

async function setup(env: Record<string, string>) {
  const engine = await startTestEngine({ env });
  engines.push(engine);
  await engine.ok(engine.adminToken, Q.deploy, {
    s: `${CRM_SERVER()}---${triageProcess({ key: 'keys', topic: 't-keys' })}`,
  });
  const worker = (id: string) =>
    engine.principal('WORKER', id, { topics: ['t-keys'] }).then((t) => new WorkerSim(engine, t, id));
  return { engine, w1: await worker('w-1'), w2: await worker('w-2') };
}

const finish = async (w: WorkerSim, task: Locked, seq: number) =>
  w.tool(task, seq, 'crm/create_ticket', 'COMPLETED', TICKET, { ticketId: 'T-981' });

describe('stepByIdempotencyKey', () => {
  it('a lease lapsed on a STARTED write, the next attempt reused the key: two sends, one outcome', async () => {
    // one expiry fails the attempt: the lapsed lease is never re-acquired on attempt 1
    const { engine, w1, w2 } = await setup({ ABADA_MAX_LEASE_EXPIRIES: '1' });
    const id = await startTriage(engine, 'C-42', 'keys');
    const a = await w1.fetchOne({ topic: 't-keys' });
    const started = await runToWrite(w1, a);
    const key = started.idempotencyKey!;
    expect(key).toMatch(/^abada-/);
    await w1.expireLease(a);
    expect(await w2.fetch({ topic: 't-keys' })).toEqual([]);
    const b = await w2.fetchOne({ topic: 't-keys', waitMs: 5000 });
    expect(b).toMatchObject({ id: a.id, attempt: 2 });
    const again = await runToWrite(w2, b);
    expect(again.idempotencyKey).toBe(key);
    await finish(w2, b, 4);

    const { stepByIdempotencyKey: k } = await engine.ok(engine.adminToken, BY_KEY, { key });
    expect(k).toMatchObject({
      key,
      processInstanceId: id,
      taskId: a.id,
      attempt: 1,
      sequence: 4,
      toolRef: 'crm/create_ticket',
      outcome: 'COMPLETED',
    });
    expect(k!.steps.map((s) => [s.attempt, s.sequence, s.state])).toEqual([
      [1, 4, 'STARTED'],
      [2, 4, 'COMPLETED'],
    ]);
    expect(k!.sends.map((s) => [s.reason, s.attempt, s.workerId])).toEqual([
      ['CREATED', 1, 'w-1'],
      ['REUSED', 2, 'w-2'],
    ]);
    expect(new Date(k!.sends[1].at).getTime()).toBeGreaterThan(new Date(k!.sends[0].at).getTime());

    // who may ask: a person of the project yes, a worker no; an unknown key is null
    const human = await engine.principal('HUMAN', 'ops', { groups: ['ops'] });
    expect((await engine.ok(human, BY_KEY, { key })).stepByIdempotencyKey?.taskId).toBe(a.id);
    expect(codeOf(await engine.gql(w1.token, BY_KEY, { key }))).toBe('FORBIDDEN');
    expect(
      (await engine.ok(engine.adminToken, BY_KEY, { key: 'abada-none' })).stepByIdempotencyKey,
    ).toBeNull();
  });

  it('a lease re-acquired on the same attempt while the write was STARTED is a send', async () => {
    const { engine, w1, w2 } = await setup({});
    await startTriage(engine, 'C-42', 'keys');
    const a = await w1.fetchOne({ topic: 't-keys' });
    const key = (await runToWrite(w1, a)).idempotencyKey!;
    await w1.expireLease(a);
    const b = await w2.fetchOne({ topic: 't-keys' });
    expect(b).toMatchObject({ id: a.id, attempt: 1 });
    // the new holder re-sends the STARTED write (answered from the journal, same key), then it completes
    expect((await w2.tool(b, 4, 'crm/create_ticket', 'STARTED', TICKET)).idempotencyKey).toBe(key);
    await finish(w2, b, 4);
    // a lease after the write ended is not a send
    await w2.complete(b, { triage: { ticketId: 'T-981', priority: 'high', _confidence: 92 } });

    const k = (await engine.ok(engine.adminToken, BY_KEY, { key })).stepByIdempotencyKey!;
    expect(k.outcome).toBe('COMPLETED');
    expect(k.steps.map((s) => s.state)).toEqual(['COMPLETED']);
    expect(k.sends.map((s) => [s.reason, s.attempt, s.sequence, s.workerId])).toEqual([
      ['CREATED', 1, 4, 'w-1'],
      ['LEASE', 1, 4, 'w-2'],
    ]);
  });
});
