/**
 * Shared setup for the boundary tests (SPEC §15.4): an agent process on its own topic with a timeout
 * and/or failure boundary leading to a `late` user task, a child process to delegate to, and waits on
 * the database clock (the one the sweep judges by).
 */
import { sql } from 'drizzle-orm';
import type { TestEngine } from '../../helpers/engine.js';
import { CRM_SERVER, Q } from '../../helpers/fixtures.js';
import { waitFor } from '../../helpers/wait.js';
import { PAY_SERVER } from '../approvals/setup.js';
import { instance } from './helpers.js';

/** The child a `delegate:bnd-child` call starts: one service task on topic `bnd-child`. */
const CHILD = `
kind: Process
key: bnd-child
variables: { customerId: { type: string } }
start: work
nodes:
  - { id: work, type: service, topic: bnd-child, next: done }
  - { id: done, type: end }
`;

export interface BoundaryOpts {
  /** minutes; absent = no timeout boundary */
  timeout?: number;
  onFailure?: boolean;
  maxAttempts?: number;
  outputSchema?: string;
}

/**
 * An agent node `work` on topic `key`: pay and crm tools, a delegation, the boundaries asked for (to a
 * `late` user task on timeout, a `fallback` one on failure).
 */
export function boundaryProcess(key: string, o: BoundaryOpts = {}): string {
  const lines = [
    o.timeout !== undefined ? `timeout_minutes: ${o.timeout}` : '',
    o.timeout !== undefined ? 'on_timeout: late' : '',
    o.onFailure ? 'on_failure: fallback' : '',
    o.outputSchema ? `output_schema: ${o.outputSchema}` : '',
  ].filter(Boolean);
  return `
kind: Process
key: ${key}
variables: { customerId: { type: string } }
start: work
nodes:
  - id: work
    type: agent
    topic: ${key}
    model: gemini-3.6-flash
    prompt: Settle the customer's request.
    tools: [pay/lookup, pay/refund, crm/create_ticket, crm/send_email, "delegate:bnd-child"]
    result_variable: outcome
    max_attempts: ${o.maxAttempts ?? 3}
${lines.map((l) => `    ${l}\n`).join('')}    next: done
${o.timeout !== undefined ? '  - { id: late, type: user_task, candidate_groups: [ops], next: done }\n' : ''}${o.onFailure ? '  - { id: fallback, type: user_task, candidate_groups: [ops], next: done }\n' : ''}  - { id: done, type: end }
`;
}

/** Deploys the servers, the child and one boundary process per entry of `processes`. */
export async function deployBoundaries(engine: TestEngine, processes: Record<string, BoundaryOpts>) {
  const docs = Object.entries(processes).map(([key, o]) => boundaryProcess(key, o));
  await engine.ok(engine.adminToken, Q.deploy, {
    s: [PAY_SERVER, CRM_SERVER(), CHILD, ...docs].join('---'),
  });
}

export async function start(engine: TestEngine, key: string): Promise<string> {
  const r = await engine.ok(engine.adminToken, Q.start, { key, v: { customerId: 'C-42' } });
  return r.startProcess.id;
}

/** Waits until the task's timeout is due by the database's clock. */
export async function untilDue(engine: TestEngine, taskId: string): Promise<void> {
  await waitFor(`the boundary of task ${taskId} to come due`, async () => {
    const r = await engine.context.db.execute(
      sql`SELECT boundary_at <= now() AS due FROM external_tasks WHERE id = ${taskId}`,
    );
    return (r.rows[0] as { due: boolean } | undefined)?.due;
  });
}

/** The instance's history rows of `eventType`. */
export async function eventsOf(engine: TestEngine, id: string, eventType: string) {
  return (await instance(engine, id)).history.filter((h) => h.eventType === eventType);
}

/** What a task row says of its boundary (not in the GraphQL contract). */
export async function taskRow(engine: TestEngine, taskId: string) {
  const r = await engine.context.db.execute(
    sql`SELECT state, boundary, error_type AS "errorType", error_message AS "errorMessage"
          FROM external_tasks WHERE id = ${taskId}`,
  );
  return r.rows[0] as { state: string; boundary: string | null; errorType: string; errorMessage: string };
}
