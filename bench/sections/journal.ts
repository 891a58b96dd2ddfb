/** 1. journalStep and journalSteps throughput, and the floor of one GraphQL request. */
import type pg from 'pg';
import {
  BATCH,
  type Client,
  fetchTasks,
  JOURNAL,
  MS,
  measuredRate,
  results,
  row,
  startMany,
  want,
} from './context.js';
import { rawUpdateRate } from './raw.js';

/** Leased tasks for the clients, and the sequence each is at. */
type Fresh = () => Promise<{ tasks: { id: string; attempt: number }[]; seq: number[] }>;

/** 1. journalStep commits/s with 1, 4, 16 clients, each on its own leased task (model calls, no limits). */
export async function journalThroughput(pool: pg.Pool, admin: Client, worker: Client) {
  // Every measurement starts on fresh tasks: an agent task has tens of steps, not thousands.
  const fresh: Fresh = async () => {
    await startMany(admin, 'bench', 16);
    const tasks = await fetchTasks(worker, 'journal-bench', 16);
    return { tasks, seq: tasks.map(() => 0) };
  };
  const raw = { ...(results.rawUpdateTps as Record<number, number>) };
  for (const c of want('journal') ? [1, 4, 16] : []) {
    const { tasks, seq } = await fresh();
    raw[c] = await rawUpdateRate(pool, c); // the baseline right before its figure (raw.ts)
    // Each operation is one model call journaled STARTED then COMPLETED: two journalStep commits.
    const ops = await measuredRate(c, MS, async (client) => {
      const t = tasks[client];
      const sequence = ++seq[client];
      const base = {
        taskId: t.id,
        workerId: 'journal-bench',
        attempt: t.attempt,
        sequence,
        kind: 'MODEL_CALL',
        model: 'gpt-4.1-mini',
        request: { model: 'gpt-4.1-mini', messagesHash: `h${sequence}` },
      };
      await worker(JOURNAL, { i: { ...base, state: 'STARTED' } });
      await worker(JOURNAL, {
        i: {
          ...base,
          state: 'COMPLETED',
          response: { role: 'assistant', content: 'ok' },
          usage: { inputTokens: 10, outputTokens: 5 },
        },
      });
    });
    row(
      `journalStep commits/s, ${c} client(s)`,
      ops * 2,
      raw[c],
      'commits/s',
      'raw: single-row UPDATE … RETURNING, measured just before',
    );
  }
  raw[16] = await rawUpdateRate(pool, 16);
  await journalBatches(fresh, worker, raw);
  // The floor of one GraphQL request on this engine: no database work at all.
  const floor = await measuredRate(16, MS, () => worker(`{ __typename }`));
  row('GraphQL `{ __typename }` requests/s, 16 clients', floor, raw[16], 'requests/s', 'no database work');
}

/** journalSteps: a worker sends n steps (model calls, STARTED + COMPLETED) per request and commit. */
async function journalBatches(fresh: Fresh, worker: Client, raw: Record<number, number>) {
  for (const n of [8, 32]) {
    const { tasks, seq } = await fresh();
    const batches = await measuredRate(16, MS, async (client) => {
      const t = tasks[client];
      const steps = [];
      for (let k = 0; k < n / 2; k++) {
        const sequence = ++seq[client];
        const base = {
          sequence,
          kind: 'MODEL_CALL',
          model: 'gpt-4.1-mini',
          request: { model: 'gpt-4.1-mini', messagesHash: `h${sequence}` },
        };
        steps.push({ ...base, state: 'STARTED' });
        steps.push({
          ...base,
          state: 'COMPLETED',
          response: { role: 'assistant', content: 'ok' },
          usage: { inputTokens: 10, outputTokens: 5 },
        });
      }
      await worker(BATCH, { i: { taskId: t.id, workerId: 'journal-bench', attempt: t.attempt, steps } });
    });
    row(
      `journalSteps (${n} per request), steps/s, 16 clients`,
      batches * n,
      raw[16],
      'steps/s',
      `${batches.toFixed(0)} commits/s`,
    );
  }
}
