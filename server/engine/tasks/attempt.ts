/**
 * How every command here fails an attempt: as the lease does, and when it was the last one, through the
 * node's failure boundary (SPEC §15.4) if it names one, instead of a TASK_FAILED incident.
 */
import type { ExternalTaskRow } from '../../db/schema.js';
import type { Tx } from '../common/index.js';
import { takeFailureBoundary } from '../instances/index.js';
import { type AttemptFailure, failAttempt } from '../lease/index.js';

export function failTaskAttempt(tx: Tx, task: ExternalTaskRow, f: Omit<AttemptFailure, 'onExhausted'>) {
  return failAttempt(tx, task, { ...f, onExhausted: takeFailureBoundary });
}
