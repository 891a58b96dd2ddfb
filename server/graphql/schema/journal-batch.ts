/**
 * journalBatch: several tasks' journal calls in one request (engine/journal/commands.ts). Each entry is
 * answered on its own: its results, or, when the rules refuse it, null and an error at
 * `["journalBatch", <entry>, "results"]` with the code and details journalSteps would have given. A batch
 * malformed as a whole (no entries, more than 32, a task twice) is refused whole with VALIDATION_FAILED.
 */
import { type JournalResult, journalBatch, MAX_BATCH_TASKS } from '../../engine/journal/index.js';
import { builder } from '../builder.js';
import { BatchStepInput, JournalResultRef, stepsOf } from './step.js';

interface EntryAnswer {
  taskId: string;
  attempt: number;
  results: Promise<JournalResult[]>;
}

const JournalBatchEntryInput = builder.inputType('JournalBatchEntryInput', {
  fields: (t) => ({
    taskId: t.id({ required: true }),
    attempt: t.int({ required: true }),
    traceparent: t.string({
      description:
        "The W3C traceparent of this entry's task (its attempt's trace): the engine's span for the entry lands there.",
    }),
    steps: t.field({
      type: [BatchStepInput],
      required: true,
      description: "1 to 50 steps of this task's attempt, applied in order, all or nothing.",
    }),
  }),
});

const JournalBatchInput = builder.inputType('JournalBatchInput', {
  fields: (t) => ({
    workerId: t.string({ required: true }),
    entries: t.field({
      type: [JournalBatchEntryInput],
      required: true,
      description: `1 to ${MAX_BATCH_TASKS} entries, one per task.`,
    }),
  }),
});

const JournalBatchEntry = builder.objectRef<EntryAnswer>('JournalBatchEntry').implement({
  description: "One task's answer in a journalBatch.",
  fields: (t) => ({
    taskId: t.exposeID('taskId'),
    attempt: t.exposeInt('attempt'),
    results: t.expose('results', {
      type: [JournalResultRef],
      nullable: true,
      description:
        "The entry's steps as journalSteps answers them; null when the entry was refused (its error carries the code).",
    }),
  }),
});

builder.mutationField('journalBatch', (t) =>
  t.field({
    type: [JournalBatchEntry],
    description:
      "Several tasks' journal calls in one request (a worker running many agents): each entry is journalSteps of its own task, checked and refused on its own; all of them normally commit together.",
    authScopes: { worker: true },
    args: { input: t.arg({ type: JournalBatchInput, required: true }) },
    resolve: (_r, { input }, ctx) => {
      const entries = input.entries.map((e) => ({
        taskId: e.taskId,
        steps: stepsOf(e.steps, { taskId: e.taskId, workerId: input.workerId, attempt: e.attempt }),
      }));
      const answers = journalBatch(ctx.engine, ctx.actor!, entries);
      return entries.map((e, i) => ({
        taskId: e.taskId,
        attempt: input.entries[i].attempt,
        results: answers[i],
      }));
    },
  }),
);
