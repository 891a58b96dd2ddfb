/**
 * The soak's end checks, read straight from the database (`pg`), the CRM's record and the model's
 * call count. Each check yields figures and a number of violations; any violation fails the run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { CrmServer } from '../server/demo/crm-server.js';
import { tagOf } from './defs.js';
import { gql } from './procs.js';

export interface Row {
  check: string;
  figure: string;
  violations: number;
}

const KEYED = new Set(['crm/create_ticket', 'crm/refund']);
const KEYLESS = new Set(['crm/send_email']);
const LEASE_EVENTS = new Set(['TASK_LEASED', 'TASK_LEASE_REACQUIRED']);
/**
 * Task events by which the lease holder ends its lease: it finished, failed, proposed a call and parked,
 * or handed the task back (deferTask).
 */
const HOLDER_ENDS = new Set([
  'TASK_COMPLETED',
  'ATTEMPT_FAILED',
  'TASK_FAILED',
  'STEP_PROPOSED',
  'TASK_DEFERRED',
]);
/** Task events by which the engine or a person ends a lease (retired, settled, failed as poison work). */
const OTHER_ENDS = new Set(['TASK_CANCELLED', 'ATTEMPT_FAILED', 'TASK_FAILED', 'STEP_OUTCOME_UNKNOWN']);
/** Journal events a worker writes while it holds the lease. */
const STEP_EVENTS = new Set(['STEP_STARTED', 'STEP_COMPLETED', 'STEP_FAILED', 'STEP_PROPOSED']);

interface HistoryRow {
  process_instance_id: string;
  event_type: string;
  actor: string;
  at: Date;
  task_id: string | null;
  data: { workerId?: string; lockExpiresAt?: string; errorType?: string };
}

export interface CheckInput {
  databaseUrl: string;
  engineUrl: string;
  adminToken: string;
  crm: CrmServer;
  modelCalls: number;
  kills: number;
  concurrency: number;
  engineRestarts: number;
  expectedInstances: number;
  /** Worker log files are searched for the secrets and prompt texts below. */
  logDir: string;
  secrets: string[];
}

export async function runChecks(c: CheckInput): Promise<{ rows: Row[]; figures: Record<string, number> }> {
  const db = new pg.Client({ connectionString: c.databaseUrl });
  await db.connect();
  const rows: Row[] = [];
  const f: Record<string, number> = {};
  try {
    // 1. Instances: every one ended.
    const inst = (
      await db.query<{
        id: string;
        key: string;
        state: string;
        variables: Record<string, unknown>;
        business_key: string;
      }>(`SELECT id, key, state, variables, business_key FROM process_instances`)
    ).rows;
    const count = (s: string) => inst.filter((i) => i.state === s).length;
    f.started = inst.length;
    f.completed = count('COMPLETED');
    f.rejectedPath = inst.filter(
      (i) =>
        i.state === 'COMPLETED' &&
        (i.variables.outcome as { refunded?: boolean } | undefined)?.refunded === false,
    ).length;
    f.cancelled = count('CANCELLED');
    f.failed = count('FAILED');
    f.stillRunning = inst.length - f.completed - f.cancelled - f.failed;
    rows.push({
      check: 'instances ended',
      figure: `started ${f.started}/${c.expectedInstances}, completed ${f.completed} (rejected path ${f.rejectedPath}), cancelled ${f.cancelled}, failed ${f.failed}, still running ${f.stillRunning}`,
      violations: f.stillRunning + f.failed + Math.max(0, c.expectedInstances - f.started),
    });
    rows.push({
      check: 'faults injected',
      figure: `worker kills ${c.kills}, engine restarts ${c.engineRestarts}`,
      violations: 0,
    });

    // 2. Keyed writes: exactly one side effect per COMPLETED step's key; none twice, none lost.
    const steps = (
      await db.query<{
        task_id: string;
        attempt: number;
        sequence: number;
        kind: string;
        state: string;
        tool_ref: string | null;
        idempotency_key: string | null;
        reused: boolean;
        business_key: string;
      }>(
        `SELECT s.task_id, s.attempt, s.sequence, s.kind, s.state, s.tool_ref, s.idempotency_key, s.reused, i.business_key
           FROM steps s JOIN external_tasks t ON t.id = s.task_id JOIN process_instances i ON i.id = t.process_instance_id`,
      )
    ).rows;
    const effectsByKey = new Map<string, number>();
    let keylessEffectsWithKey = 0;
    let keyedEffectsWithoutKey = 0;
    for (const e of c.crm.sideEffects) {
      const ref = `crm/${e.tool}`;
      if (KEYED.has(ref)) {
        if (e.key === null) keyedEffectsWithoutKey++;
        else effectsByKey.set(e.key, (effectsByKey.get(e.key) ?? 0) + 1);
      } else if (e.key !== null) keylessEffectsWithKey++;
    }
    const keyed = steps.filter((s) => s.kind === 'TOOL_CALL' && s.tool_ref && KEYED.has(s.tool_ref));
    const completedKeyed = keyed.filter((s) => s.state === 'COMPLETED' && !s.reused);
    const reusedKeyed = keyed.filter((s) => s.reused).length;
    const stepKeys = new Set(keyed.map((s) => s.idempotency_key).filter((k): k is string => !!k));
    let lost = 0;
    let duplicates = 0;
    for (const s of completedKeyed) {
      const n = s.idempotency_key ? (effectsByKey.get(s.idempotency_key) ?? 0) : 0;
      if (n === 0) lost++;
    }
    for (const n of effectsByKey.values()) if (n > 1) duplicates += n - 1;
    const phantom = [...effectsByKey.keys()].filter((k) => !stepKeys.has(k)).length + keyedEffectsWithoutKey;
    const keyedReplays = c.crm.calls.filter(
      (x) => KEYED.has(`crm/${x.tool}`) && x.status === 'replayed',
    ).length;
    f.keyedExpected = completedKeyed.length;
    f.keyedFound = completedKeyed.filter((s) => (effectsByKey.get(s.idempotency_key ?? '') ?? 0) > 0).length;
    f.duplicates = duplicates;
    f.lost = lost;
    f.keyedReplays = keyedReplays;
    rows.push({
      check: 'keyed writes: one side effect each',
      figure: `expected ${f.keyedExpected}, found ${f.keyedFound}, duplicates ${duplicates}, lost ${lost}, without a journal step ${phantom}, re-sent with the same key ${keyedReplays}, reused from an earlier attempt ${reusedKeyed}`,
      violations: duplicates + lost + phantom,
    });

    // 3. Keyless writes: never sent twice; every interrupted one became an incident.
    const keyless = steps.filter((s) => s.kind === 'TOOL_CALL' && s.tool_ref && KEYLESS.has(s.tool_ref));
    const callsByTag = new Map<string, number>();
    for (const x of c.crm.calls) {
      if (!KEYLESS.has(`crm/${x.tool}`)) continue;
      const tag = tagOf(String(x.args.subject ?? ''));
      callsByTag.set(tag, (callsByTag.get(tag) ?? 0) + 1);
    }
    const twice = [...callsByTag.values()].filter((n) => n > 1).length;
    const unknownIncidents = (
      await db.query<{ task_id: string; attempt: number; sequence: number; state: string }>(
        `SELECT task_id, attempt, sequence, state FROM incidents WHERE type = 'TOOL_OUTCOME_UNKNOWN'`,
      )
    ).rows;
    const incidentOf = new Set(unknownIncidents.map((i) => `${i.task_id}:${i.attempt}:${i.sequence}`));
    const interrupted = (
      await db.query<{ task_id: string; attempt: number; sequence: number }>(
        `SELECT DISTINCT h.task_id, h.attempt, h.sequence FROM history_events h WHERE h.event_type = 'STEP_OUTCOME_UNKNOWN'`,
      )
    ).rows;
    const withoutIncident = interrupted.filter(
      (s) => !incidentOf.has(`${s.task_id}:${s.attempt}:${s.sequence}`),
    ).length;
    const stillUnknown = keyless.filter((s) => s.state === 'OUTCOME_UNKNOWN' || s.state === 'STARTED').length;
    const openUnknown = unknownIncidents.filter((i) => i.state === 'OPEN').length;
    f.keylessSteps = keyless.length;
    f.keylessCalls = [...callsByTag.values()].reduce((a, b) => a + b, 0);
    f.keylessSentTwice = twice;
    f.keylessInterrupted = interrupted.length;
    rows.push({
      check: 'keyless writes: never re-sent',
      figure: `steps ${keyless.length}, CRM calls ${f.keylessCalls}, sent twice ${twice}, interrupted ${interrupted.length} → incidents ${unknownIncidents.length} (without one ${withoutIncident}, still open ${openUnknown}), settled by a person ${stillUnknown}, keyless calls carrying a key ${keylessEffectsWithKey}`,
      violations: twice + withoutIncident,
    });

    // 4. No task leased by two workers at once (lease events and lockExpiresAt, both on the DB clock).
    const hist = (
      await db.query<HistoryRow>(
        `SELECT process_instance_id, event_type, actor, at, task_id, data FROM history_events
          ORDER BY process_instance_id, seq, idx`,
      )
    ).rows;
    let overlaps = 0;
    let leases = 0;
    let interruptedLeases = 0;
    let notHolder = 0;
    const open = new Map<string, { worker: string; until: number; instance: string }>();
    for (const h of hist) {
      if (h.event_type === 'INSTANCE_CANCELLED' || h.event_type === 'INSTANCE_SUSPENDED') {
        for (const [task, l] of open) {
          if (l.instance !== h.process_instance_id) continue;
          interruptedLeases++;
          open.delete(task);
        }
        continue;
      }
      if (!h.task_id) continue;
      const prev = open.get(h.task_id);
      if (LEASE_EVENTS.has(h.event_type)) {
        leases++;
        const at = new Date(h.at).getTime();
        if (prev) {
          interruptedLeases++;
          if (at < prev.until) overlaps++;
        }
        open.set(h.task_id, {
          worker: h.data.workerId ?? '?',
          until: new Date(h.data.lockExpiresAt ?? 0).getTime(),
          instance: h.process_instance_id,
        });
      } else {
        const byWorker = h.actor.startsWith('worker:');
        // A journal write must come from the worker holding the live lease.
        if (byWorker && STEP_EVENTS.has(h.event_type) && h.actor !== `worker:${prev?.worker}`) notHolder++;
        if (!prev) continue;
        if (byWorker && h.actor === `worker:${prev.worker}` && HOLDER_ENDS.has(h.event_type))
          open.delete(h.task_id);
        else if (!byWorker && OTHER_ENDS.has(h.event_type)) {
          interruptedLeases++;
          open.delete(h.task_id);
        }
      }
    }
    interruptedLeases += open.size;
    f.leases = leases;
    f.doubleLeases = overlaps;
    f.journalWritesWithoutLease = notHolder;
    f.interruptedLeases = interruptedLeases;
    rows.push({
      check: 'no task leased twice at once',
      figure: `leases ${leases}, re-acquired after expiry or otherwise interrupted ${interruptedLeases}, overlapping ${overlaps}, journal writes by a worker not holding the lease ${notHolder}`,
      violations: overlaps + notHolder,
    });

    // 5. Model calls: each interrupted lease may have lost at most one in-flight call (a task's calls run
    //    one after another), so calls ≤ completed turns + failed calls + interrupted leases.
    const modelSteps = steps.filter((s) => s.kind === 'MODEL_CALL');
    f.modelCompleted = modelSteps.filter((s) => s.state === 'COMPLETED').length;
    f.modelFailed = modelSteps.filter((s) => s.state === 'FAILED').length;
    f.modelCalls = c.modelCalls;
    const bound = f.modelCompleted + f.modelFailed + interruptedLeases;
    f.modelBound = bound;
    rows.push({
      check: 'model calls bounded',
      figure: `calls ${c.modelCalls} ≤ completed ${f.modelCompleted} + failed ${f.modelFailed} + interrupted leases ${interruptedLeases} = ${bound} (kills × concurrency = ${c.kills * c.concurrency})`,
      violations: c.modelCalls > bound ? c.modelCalls - bound : 0,
    });

    // 6. Every audit chain verifies.
    let broken = 0;
    for (let i = 0; i < inst.length; i += 20) {
      const batch = inst.slice(i, i + 20);
      const q = `query { ${batch.map((x, j) => `a${j}: verifyAudit(processInstanceId: "${x.id}") { valid }`).join(' ')} }`;
      const r = await gql(c.engineUrl, c.adminToken, q);
      if (r.errors) throw new Error(JSON.stringify(r.errors));
      for (let j = 0; j < batch.length; j++) if (!r.data[`a${j}`].valid) broken++;
    }
    f.auditBroken = broken;
    rows.push({
      check: 'audit chains verify',
      figure: `${inst.length - broken}/${inst.length} valid`,
      violations: broken,
    });

    // 7. Secrets and prompts: never in history, incidents or worker logs.
    let leaks = 0;
    const logs = readdirSync(c.logDir).map((n) => readFileSync(path.join(c.logDir, n), 'utf8'));
    for (const secret of c.secrets) {
      const h = await db.query(
        `SELECT (SELECT count(*)::int FROM history WHERE data::text LIKE $1 OR actor LIKE $1 OR events::text LIKE $1)
              + (SELECT count(*)::int FROM incidents WHERE message LIKE $1 OR coalesce(resolution::text, '') LIKE $1) AS n`,
        [`%${secret}%`],
      );
      leaks += h.rows[0].n + logs.filter((l) => l.includes(secret)).length;
    }
    f.secretLeaks = leaks;
    rows.push({
      check: 'secrets and prompts kept out',
      figure: `${c.secrets.length} texts searched in history, incidents and ${logs.length} worker logs: ${leaks} found`,
      violations: leaks,
    });

    // 8. Nothing else stuck: no open incident, no live approval.
    const openInc = (
      await db.query(`SELECT type, count(*)::int AS n FROM incidents WHERE state = 'OPEN' GROUP BY type`)
    ).rows;
    const pending = (await db.query(`SELECT count(*)::int AS n FROM approvals WHERE state = 'PENDING'`))
      .rows[0].n as number;
    f.openIncidents = openInc.reduce((a, r) => a + r.n, 0);
    f.pendingApprovals = pending;
    rows.push({
      check: 'nothing left open',
      figure: `open incidents ${f.openIncidents} ${JSON.stringify(openInc)}, pending approvals ${pending}`,
      violations: f.openIncidents + pending,
    });
  } finally {
    await db.end();
  }
  return { rows, figures: f };
}

export function printTable(rows: Row[]): string {
  const w = Math.max(...rows.map((r) => r.check.length));
  const lines = rows.map(
    (r) =>
      `${r.violations === 0 ? 'ok  ' : 'FAIL'} ${r.check.padEnd(w)}  ${r.figure}${r.violations ? `  (${r.violations} violations)` : ''}`,
  );
  return lines.join('\n');
}
