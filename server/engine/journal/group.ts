/**
 * Group commit of the journal: calls of different tasks that arrive while earlier ones are being written
 * are journaled together — one load that locks every task of the group (in task id order), each call's
 * rules in memory on its own state, one write and one COMMIT for all. A call the rules refuse adds
 * nothing to the write and gets its refusal; the others commit. A call alone takes transaction.ts's path.
 *
 * Anything the in-memory rules cannot keep to one call — a refused call that had already written
 * (reuse reads write the call's changes first), an effect that fails, a database error — rolls the
 * group back and runs each call again on its own, so a group never answers differently from its calls.
 *
 * At most GROUPS_IN_FLIGHT groups run at once per engine process; a group still running after
 * STALLED_MS (a row lock, a slow disk) lets one more start, up to MAX_IN_FLIGHT, so one stuck call never
 * holds up every other task's journal. Calls of one task never share a group.
 */
import { EngineError, fallbackReason, notFound } from '../../errors.js';
import { type Actor, countFallback, type EngineContext, isUuid, sameProject } from '../common/index.js';
import { applyAll, loadKeyOf, ownTransaction, readsOf, runOne } from './transaction.js';
import type { JournalStepInput } from './input.js';
import type { JournalResult } from './rules.js';
import { Turns } from '../../shared/turns.js';
import { beginAndLoadMany, writeAndCommit } from './sql.js';
import { type Effect, JournalState } from './state.js';

const GROUPS_IN_FLIGHT = 2;
const STALLED_MS = 25;
/** Groups in flight at most, stalled ones included (the pool has 20 connections). */
const MAX_IN_FLIGHT = 8;
/** Calls in one group at most, and tasks in one journalBatch: a batch fits one group. */
export const MAX_BATCH_TASKS = 32;

interface Call {
  actor: Actor;
  inputs: JournalStepInput[];
  batch: boolean;
  resolve(out: JournalResult[]): void;
  reject(e: unknown): void;
}

type Outcome = { value: JournalResult[] } | { error: unknown };

/** The rules refused a call after it wrote (a reuse read writes first): only a rollback undoes it. */
class GroupAbort extends Error {
  override name = 'GroupAbort';
}

const groups = new WeakMap<EngineContext, JournalGroups>();

export function journalGroups(ctx: EngineContext): JournalGroups {
  if (!groups.has(ctx)) groups.set(ctx, new JournalGroups(ctx));
  return groups.get(ctx)!;
}

export class JournalGroups {
  private readonly turns: Turns<Call>;
  /** calls journaled, and how many of them in groups of two or more (for the bench and the tests) */
  readonly counts = { calls: 0, grouped: 0, groups: 0, fallbacks: 0 };

  /** ABADA_JOURNAL_GROUP_COMMIT=false: every call alone (for comparison and diagnosis) */
  private readonly maxGroup: number;

  constructor(private readonly ctx: EngineContext) {
    this.maxGroup = ctx.config.journalGroupCommit ? MAX_BATCH_TASKS : 1;
    this.turns = new Turns<Call>({
      inFlight: GROUPS_IN_FLIGHT,
      stalledMs: STALLED_MS,
      maxInFlight: MAX_IN_FLIGHT,
      maxTurn: this.maxGroup,
      key: (c) => c.inputs[0].taskId,
      run: (group) => this.run(group),
    });
  }

  /**
   * Calls of several tasks (journalBatch) are all queued before a group is formed, so they share one
   * group (and its COMMIT) unless the groups in flight are all busy. One promise per call, in order.
   */
  submit(actor: Actor, calls: { inputs: JournalStepInput[]; batch: boolean }[]) {
    if (this.maxGroup === 1) return calls.map((c) => runOne(this.ctx, actor, c.inputs, c.batch));
    const queued: Call[] = [];
    const out = calls.map(
      ({ inputs, batch }) =>
        new Promise<JournalResult[]>((resolve, reject) => {
          queued.push({ actor, inputs, batch, resolve, reject });
        }),
    );
    this.turns.push(...queued);
    return out;
  }

  /** A call in its own transaction, as if it had come alone. */
  private async settle(c: Call): Promise<void> {
    try {
      c.resolve(await runOne(this.ctx, c.actor, c.inputs, c.batch));
    } catch (e) {
      c.reject(e);
    }
  }

  private async run(group: Call[]): Promise<void> {
    this.counts.calls += group.length;
    if (group.length === 1) return this.settle(group[0]);
    this.counts.grouped += group.length;
    this.counts.groups++;
    let outcomes: Outcome[];
    try {
      outcomes = await this.together(group);
    } catch (e) {
      // a named reason: each call again on its own; anything else is a bug, answered to all, not hidden
      const reason = e instanceof GroupAbort ? 'refused-after-write' : fallbackReason(e);
      if (reason === null) {
        for (const c of group) c.reject(e);
        return;
      }
      this.counts.fallbacks++;
      countFallback(this.ctx.counters, 'journal-group', reason);
      for (const c of group) await this.settle(c);
      return;
    }
    group.forEach((c, i) => {
      const o = outcomes[i];
      if ('value' in o) c.resolve(o.value);
      else c.reject(o.error);
    });
  }

  /** One transaction for the group; each call's answer, or a throw when the group must be run call by call. */
  private async together(group: Call[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = new Array(group.length);
    // a task id that is no uuid is not loaded: NOT_FOUND, as for a task the actor may not see
    const live = group.flatMap((c, i) => (isUuid(c.inputs[0].taskId) ? [i] : []));
    const keys = live.map((i) => loadKeyOf(group[i].inputs));
    return ownTransaction(this.ctx, async (db, committed) => {
      const rows = await beginAndLoadMany(db, keys);
      const steps: unknown[] = [];
      const history: Record<string, unknown>[] = [];
      const effects: Effect[] = [];
      for (const [i, c] of group.entries()) {
        const row = rows.get(live.indexOf(i));
        if (!row || !sameProject(c.actor, row.projectId as string)) {
          outcomes[i] = { error: notFound('external task', c.inputs[0].taskId) };
          continue;
        }
        const state = JournalState.fromLoad(row);
        let wrote = false;
        const reads = readsOf(db, state, () => {
          wrote = true;
        });
        try {
          const { out, refusal } = await applyAll(state, this.ctx, c.actor, reads, c.inputs, c.batch);
          outcomes[i] = refusal ? { error: refusal } : { value: out };
        } catch (e) {
          if (!(e instanceof EngineError)) throw e;
          if (wrote) throw new GroupAbort(e.message, { cause: e });
          outcomes[i] = { error: e };
          continue;
        }
        const changes = state.takeChanges();
        steps.push(...changes.steps);
        history.push(...changes.history);
        effects.push(...state.effects);
      }
      await writeAndCommit(db, { steps, history: inChainOrder(history) }, effects);
      committed();
      return outcomes;
    });
  }
}

/**
 * The group's history rows in one order: by instance (so two groups lock the instances' chain heads in
 * the same order), each call's rows in its own order; `ord` numbered afresh (each call counted from 0).
 */
function inChainOrder(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  const id = (row: Record<string, unknown>) => String(row.process_instance_id);
  // a stable sort: each instance's rows stay in the order they were made
  const sorted = [...rows].sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0));
  return sorted.map((row, ord) => ({ ...row, ord }));
}
