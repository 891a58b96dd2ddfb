/** A test acting as a worker through the GraphQL contract (the real worker is tested under test/worker). */
import { sql } from 'drizzle-orm';
import type { ResultOf } from '../../server/client/index.js';
import { Q, topic } from './fixtures.js';
import type { GqlResult, TestEngine } from './engine.js';
import { waitFor } from './wait.js';

/** A leased task as Q.fetch selects it. */
export type Locked = ResultOf<typeof Q.fetch>['fetchAndLock'][number];

export class WorkerSim {
  constructor(
    readonly engine: TestEngine,
    readonly token: string,
    readonly workerId = 'sim-1',
  ) {}

  async fetch(
    opts: { topic?: string; maxTasks?: number; lockMs?: number; waitMs?: number } = {},
  ): Promise<Locked[]> {
    const d = await this.engine.ok(this.token, Q.fetch, {
      input: {
        workerId: this.workerId,
        maxTasks: opts.maxTasks ?? 1,
        topics: [topic(opts.topic, opts.lockMs)],
        asyncResponseTimeoutMs: opts.waitMs ?? 0,
      },
    });
    return d.fetchAndLock;
  }

  /** Starts `n` support-triage instances (seed 002) and leases their tasks. */
  async leaseTriage(n: number): Promise<Locked[]> {
    for (let i = 0; i < n; i++)
      await this.engine.ok(this.engine.adminToken, Q.start, {
        key: 'support-triage',
        v: { customerId: 'C-42' },
      });
    const tasks = await this.fetch({ maxTasks: n, waitMs: 2000 });
    if (tasks.length !== n) throw new Error(`leased ${tasks.length} tasks, expected ${n}`);
    return tasks;
  }

  async fetchOne(opts: Parameters<WorkerSim['fetch']>[0] = {}): Promise<Locked> {
    const [t] = await this.fetch({ waitMs: 2000, ...opts });
    if (!t) throw new Error('no task to fetch');
    return t;
  }

  journalRaw(
    task: { id: string; attempt: number },
    sequence: number,
    step: Record<string, unknown>,
  ): Promise<GqlResult<ResultOf<typeof Q.journal>>> {
    return this.engine.gql(this.token, Q.journal, {
      input: { taskId: task.id, workerId: this.workerId, attempt: task.attempt, sequence, ...step },
    });
  }

  async journal(task: { id: string; attempt: number }, sequence: number, step: Record<string, unknown>) {
    const r = await this.journalRaw(task, sequence, step);
    if (r.errors?.length) throw new Error(`journal ${sequence}: ${JSON.stringify(r.errors)}`);
    return r.data!.journalStep;
  }

  model(
    task: Locked,
    sequence: number,
    state: 'STARTED' | 'COMPLETED' | 'FAILED',
    extra: Record<string, unknown> = {},
  ) {
    return this.journal(task, sequence, {
      kind: 'MODEL_CALL',
      state,
      model: task.agentWork?.model ?? 'gemini-3.6-flash',
      request: { model: task.agentWork?.model ?? 'gemini-3.6-flash', messagesHash: `h${sequence}` },
      ...(state === 'COMPLETED'
        ? {
            response: { role: 'assistant', content: `turn ${sequence}` },
            usage: { inputTokens: 1000, outputTokens: 100 },
          }
        : {}),
      ...extra,
    });
  }

  tool(
    task: Locked,
    sequence: number,
    toolRef: string,
    state: string,
    args: Record<string, unknown>,
    response?: unknown,
  ) {
    return this.journal(task, sequence, {
      kind: 'TOOL_CALL',
      state,
      toolRef,
      request: { callId: `call_${sequence}`, arguments: args },
      response,
    });
  }

  completeRaw(
    task: { id: string; attempt: number },
    variables: Record<string, unknown>,
    metadata: Record<string, unknown> = {},
  ) {
    return this.engine.gql(this.token, Q.complete, {
      input: {
        taskId: task.id,
        workerId: this.workerId,
        attempt: task.attempt,
        variables,
        metadata: { promptHash: 'a'.repeat(64), ...metadata },
      },
    });
  }

  async complete(
    task: { id: string; attempt: number },
    variables: Record<string, unknown>,
    metadata: Record<string, unknown> = {},
  ) {
    const r = await this.completeRaw(task, variables, metadata);
    if (r.errors?.length) throw new Error(`complete: ${JSON.stringify(r.errors)}`);
    return r.data!.completeTask as { id: string; state: string; attempt: number };
  }

  /**
   * Lets the lease run out soon, whatever the machine's load: the lease is shortened to 100 ms with
   * extendLock (so no earlier call could have hit an expired lease), then we wait until the database's
   * clock, the one the engine judges leases by, is past it.
   */
  async expireLease(task: { id: string; attempt: number }) {
    await this.engine.ok(
      this.token,
      'mutation($input: ExtendLockInput!) { extendLock(input: $input) { id } }',
      {
        input: { taskId: task.id, workerId: this.workerId, lockDurationMs: 100, attempt: task.attempt },
      },
    );
    await waitFor(`the lease of task ${task.id} to expire`, async () => {
      const r = await this.engine.context.db.execute(
        sql`SELECT state <> 'LEASED' OR lease_expires_at < now() AS expired FROM external_tasks WHERE id = ${task.id}`,
      );
      return (r.rows[0] as { expired: boolean } | undefined)?.expired;
    });
  }

  failRaw(task: { id: string; attempt: number }, errorType: string, retryTimeoutMs = 0) {
    return this.engine.gql(this.token, Q.fail, {
      input: { taskId: task.id, workerId: this.workerId, attempt: task.attempt, errorType, retryTimeoutMs },
    });
  }
}

export async function setupSeeds(engine: TestEngine, extra = '') {
  const { CRM_SERVER, SUPPORT_TRIAGE, REFUND } = await import('./fixtures.js');
  await engine.ok(engine.adminToken, Q.deploy, {
    s: `${CRM_SERVER()}---${SUPPORT_TRIAGE}---${REFUND}${extra}`,
  });
  const worker = await engine.principal('WORKER', 'agent-worker', { topics: ['abada:agent', 'notify'] });
  return { worker };
}
