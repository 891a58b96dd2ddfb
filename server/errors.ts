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
  | 'POLICY_DENIED'
  | 'INVALID_ARGUMENTS'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNAVAILABLE'
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

/*
 * What "the database is gone" looks like from `pg`: a connection refused or reset (errno codes), a
 * server shutting down or starting up (SQLSTATE class 08, 57P01–57P03), a connection that ends
 * mid-query, or no free connection within the pool's connect timeout. drizzle wraps these (`cause`), so
 * the chain is walked.
 */
const UNAVAILABLE_CODES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|the database system is (starting up|shutting down|in recovery mode)/i;

/** Whether an error means the database could not be reached (as opposed to a refusal or a bug). */
export function isUnavailable(e: unknown): boolean {
  let cur: unknown = e;
  for (let depth = 0; cur && depth < 6; depth++) {
    const { code, message } = cur as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}

/** Transactions PostgreSQL gave up on that can simply run again: a serialization failure, a deadlock. */
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']);

/**
 * Why a fast path may hand a request to its slow path: the engine refused it (the slow path answers
 * the same refusal in its usual form), the database is unavailable, or PostgreSQL gave up on the
 * transaction. Null for anything else — a bug the fast path must not hide.
 */
export function fallbackReason(e: unknown): 'refused' | 'unavailable' | 'conflict' | null {
  if (e instanceof EngineError) return 'refused';
  if (isUnavailable(e)) return 'unavailable';
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && RETRYABLE_SQLSTATES.has(code)) return 'conflict';
  return null;
}

/** UNAVAILABLE (SPEC §9): the database is down or restarting; the same request may be sent again. */
export const unavailable = (cause?: unknown) =>
  new EngineError(
    'UNAVAILABLE',
    'The database is unavailable right now (restarting or unreachable). Retry the same request unchanged ' +
      'after a short wait: it is safe, because a request the engine did commit is answered from what it ' +
      'stored (journal steps, task reports, a fetchAndLock with its requestId).',
    {},
    { cause },
  );
