import { sha256Hex } from '../../shared/canonical.js';

/** The idempotency key of a write: derived from task, attempt and sequence, the same on every lease. */
export function idempotencyKeyFor(taskId: string, attempt: number, sequence: number): string {
  return `abada-${sha256Hex(`${taskId}:${attempt}:${sequence}`).slice(0, 40)}`;
}
