/**
 * The `abada` CLI as an operator runs it: a real child process against a running engine, talking
 * GraphQL with ABADA_URL / ABADA_TOKEN. Deploy errors point at file:line, a refund proposed by a worker
 * is approved from the command line, --json output parses, exit codes say what happened.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../helpers/engine.js';
import { CRM_SERVER, REFUND } from '../helpers/fixtures.js';
import { WorkerSim } from '../helpers/worker-sim.js';
import { parseVar } from '../../server/cli/process.js';
import { abada } from './cli-helpers.js';

let engine: TestEngine;
let dir: string;
let admin: Record<string, string>;

beforeAll(async () => {
  engine = await startTestEngine();
  dir = mkdtempSync(path.join(os.tmpdir(), 'abada-cli-'));
  admin = { ABADA_URL: engine.url, ABADA_TOKEN: engine.adminToken };
});
afterAll(async () => {
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe('abada CLI', () => {
  it('prints validation errors as file:line: CODE message and exits 1', async () => {
    const crm = file('crm.yaml', CRM_SERVER());
    const bad = REFUND.replace('crm/create_ticket', 'crm/nope');
    const badLine = bad.split('\n').findIndex((l) => l.includes('crm/nope')) + 1;
    const badFile = file('refund-bad.yaml', bad);
    const r = await abada(['deploy', crm, badFile], admin, undefined, { bin: true }); // bin/abada.mjs itself
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${badFile}:${badLine}: ABADA-APL-TOOL-002`);

    const j = await abada(['deploy', crm, badFile, '--json'], admin);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout).error.errors[0]).toMatchObject({
      code: 'ABADA-APL-TOOL-002',
      at: `${badFile}:${badLine}`,
    });
  });

  it('deploys, creates principals, starts, and decides a proposed refund', async () => {
    const ok = await abada(
      ['deploy', file('crm.yaml', CRM_SERVER()), file('refund.yaml', REFUND), '--json'],
      admin,
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).definitions[0]).toMatchObject({ key: 'refund', version: 1 });

    const [w, h] = await Promise.all([
      abada(['principal', 'create', '--kind', 'worker', '--name', 'agent', '--topic', 'abada:agent'], admin),
      abada(
        ['principal', 'create', '--kind', 'human', '--name', 'fiona', '--group', 'finance-leads', '--json'],
        admin,
      ),
    ]);
    expect(w.code, w.stderr).toBe(0);
    const workerToken = w.stdout.trim();
    expect(workerToken).toMatch(/^\S{20,}$/);
    expect(w.stderr).toContain('shown once');
    const human = JSON.parse(h.stdout);
    expect(human.principal).toMatchObject({ kind: 'HUMAN', name: 'fiona', groups: ['finance-leads'] });
    const fiona = { ABADA_URL: engine.url, ABADA_TOKEN: human.token };

    const started = await abada(
      ['start', 'refund', '--var', 'customerId=C-42', '--var', 'message=parcel lost', '--json'],
      admin,
    );
    expect(started.code, started.stderr).toBe(0);
    const instanceId = JSON.parse(started.stdout).id;

    const sim = new WorkerSim(engine, workerToken, 'cli-sim');
    const task = await sim.fetchOne();
    expect(task.processInstanceId).toBe(instanceId);
    expect(task.variables).toEqual({ customerId: 'C-42', message: 'parcel lost' });
    await sim.model(task, 1, 'STARTED');
    await sim.model(task, 1, 'COMPLETED');
    const proposed = await sim.tool(task, 2, 'crm/refund', 'PROPOSED', { orderId: '5531', amount: 89 });
    expect(proposed.taskState).toBe('AWAITING_APPROVAL');

    const list = await abada(['approvals', '--state', 'PENDING', '--json'], fiona);
    expect(list.code, list.stderr).toBe(0);
    const [approval] = JSON.parse(list.stdout).approvals;
    expect(approval).toMatchObject({ toolRef: 'crm/refund', arguments: { orderId: '5531', amount: 89 } });
    // An admin credential cannot decide; the human can, once.
    const [human1, byAdmin] = await Promise.all([
      abada(['approvals'], fiona),
      abada(['decide', approval.id, 'approve', '-m', 'ok'], admin),
    ]);
    expect(human1.stdout).toContain(approval.id);
    expect(byAdmin.code).toBe(1);
    const decided = await abada(['decide', approval.id, 'approve', '-m', 'refund due', '--json'], fiona);
    expect(decided.code, decided.stderr).toBe(0);
    expect(JSON.parse(decided.stdout)).toMatchObject({
      id: approval.id,
      state: 'APPROVED',
      decidedBy: 'fiona',
    });
    const again = await abada(['decide', approval.id, 'reject', '-m', 'no'], fiona);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('ALREADY_DECIDED');
    // The person who approved withdraws it before the call runs (a reason is required).
    expect((await abada(['revoke', approval.id], fiona)).code).toBe(2);
    const revoked = await abada(['revoke', approval.id, '-m', 'parcel found', '--json'], fiona);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({
      id: approval.id,
      state: 'REVOKED',
      comment: 'parcel found',
    });

    const [audit, cancel] = await Promise.all([
      abada(['verify-audit', instanceId, '--json'], admin),
      abada(['cancel', instanceId, '--reason', 'test over'], admin),
    ]);
    expect(audit.code, audit.stderr).toBe(0);
    expect(JSON.parse(audit.stdout)).toMatchObject({ valid: true });
    expect(cancel.code, cancel.stderr).toBe(0);
  });

  it('reads a credential from stdin, lists incidents, and uses clear exit codes', async () => {
    const [cred, inc, noToken, usage, unreachable] = await Promise.all([
      abada(['credential', 'set', 'crm-token'], admin, 's3cret-value\n'),
      abada(['incidents', '--state', 'OPEN', '--json'], admin),
      abada(['approvals'], { ABADA_URL: engine.url, ABADA_TOKEN: 'wrong' }),
      abada(['start'], admin),
      abada(['incidents'], { ABADA_URL: 'http://127.0.0.1:9', ABADA_TOKEN: 'x' }),
    ]);
    expect(cred.code, cred.stderr).toBe(0);
    expect(cred.stdout).toContain('crm-token stored');
    expect(inc.code).toBe(0);
    expect(JSON.parse(inc.stdout)).toHaveProperty('totalCount');
    expect(noToken.code).toBe(3);
    expect(usage.code).toBe(2);
    expect(unreachable.code).toBe(3);
    expect([parseVar('n=3'), parseVar('ok=true'), parseVar('s=hello'), parseVar('o={"a":[1]}')]).toEqual([
      ['n', 3],
      ['ok', true],
      ['s', 'hello'],
      ['o', { a: [1] }],
    ]);
    const help = await abada(['decide', '--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('approve|reject');
  });
});
