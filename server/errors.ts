/** The error codes of SPEC §9, plus a few of our own for abuse and internal failures. */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'VALIDATION_FAILED'
  | 'LEASE_NOT_HELD'
  | 'ATTEMPT_MISMATCH'
  | 'SEQUENCE_OUT_OF_ORDER'
  | 'DIVERGENT_STEP'
  | 'APPROVAL_REQUIRED'
  | 'BINDING_NOT_FROZEN'
  | 'LIMIT_EXCEEDED'
  | 'WORK_RETIRED'
  | 'COMMENT_REQUIRED'
  | 'STALE_DIGEST'
  | 'ALREADY_DECIDED'
  | 'ALREADY_EXECUTING'
  | 'APPROVAL_EXPIRED'
  | 'PRECONDITION_REQUIRED'
  | 'PRECONDITION_FAILED'
  | 'SEPARATION_OF_DUTIES'
  | 'PAYLOAD_TOO_LARGE'
  | 'INTERNAL';

/**
 * An error a caller can act on: a stable code, a message that says what to do, and optional details
 * (e.g. `errors` for VALIDATION_FAILED, `limit` for LIMIT_EXCEEDED). Engine commands throw these; the
 * GraphQL layer turns them into `extensions.code`.
 */
export class EngineError extends Error {
  override name = 'EngineError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const notFound = (what: string, id: string) =>
  new EngineError('NOT_FOUND', `No ${what} with id ${id} is visible to you. Check the id and your project.`);

/**
 * VALIDATION_FAILED for one input field: `message` says what to do, `path` names the field, and
 * `fieldMessage` (the message itself when not given) is the short note kept in `errors[]`.
 */
export const invalid = (message: string, path: string, fieldMessage = message) =>
  new EngineError('VALIDATION_FAILED', message, { errors: [{ path, message: fieldMessage }] });
