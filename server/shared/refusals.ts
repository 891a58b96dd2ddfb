/**
 * How the engine words a call it refused before anyone was asked (SPEC §14), on the REJECTED step; the
 * worker hands them to the model as written, never as "a person did not approve this call".
 */

/** The arguments failed the tool's `input_schema` or a `validate` check. */
export const INVALID_PREFIX = 'Invalid arguments: ';
/** A `deny` rule matched the call. */
export const DENIED_PREFIX = 'Refused by policy: ';
/** The precondition read just before the proposal already fails its `expect`: nobody is asked. */
export const NOT_PROPOSED_PREFIX = 'Not proposed: ';

/** Whether a REJECTED step's comment is the engine's own refusal (read as written). */
export function isEngineRefusal(comment: string | null | undefined): boolean {
  return [INVALID_PREFIX, DENIED_PREFIX, NOT_PROPOSED_PREFIX].some((prefix) => comment?.startsWith(prefix));
}

/** "Invalid arguments: a; b." from the failing checks' messages (each once, in order). */
export function invalidComment(messages: readonly string[]): string {
  const parts = [...new Set(messages.map((m) => m.trim().replace(/[.;]+$/, '')))];
  return `${INVALID_PREFIX}${parts.join('; ')}.`;
}

export function deniedComment(reason: string): string {
  return `${DENIED_PREFIX}${reason}`;
}

export function notProposedComment(explanation: string): string {
  return `${NOT_PROPOSED_PREFIX}${explanation}.`;
}
