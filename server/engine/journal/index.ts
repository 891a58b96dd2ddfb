/** The step journal (SPEC §4): its commands, and the journal as callers see it. */
export {
  type JournalBatchEntry,
  journalBatch,
  journalStep,
  journalSteps,
  MAX_BATCH_TASKS,
} from './commands.js';
export { type JournalLocked, journalThen } from './then.js';
export type { Then } from './sql.js';
export type { JournalStepInput, StepKind, StepState } from './input.js';
export type { JournalResult } from './rules.js';
export { loadEarlierWrites, loadSteps, type StepView, toStepView } from './views.js';
