/** The step journal (SPEC §4): its commands, and the journal as callers see it. */
export { type KeySend, type KeyTraceView, stepByIdempotencyKey } from './by-key.js';
export { journalBatch, journalStep, journalSteps } from './commands.js';
export { MAX_BATCH_TASKS } from './group.js';
export type { JournalStepInput } from './input.js';
export type { JournalResult } from './rules.js';
export type { Then } from './sql.js';
export { journalThen } from './in-one-transaction.js';
export { type StepView, loadEarlierWrites, loadSteps, toStepView } from './views.js';
