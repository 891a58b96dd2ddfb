/** What a GraphQL call can end with besides data: a refusal with a SPEC §9 code, or no answer at all. */

/** One entry of a GraphQL response's `errors`. */
export interface GraphQLErrorEntry {
  message: string;
  path?: readonly (string | number)[];
  extensions?: { code?: string; [key: string]: unknown };
}

export class ClientError extends Error {
  override name = 'ClientError';
}

/**
 * The engine answered with a GraphQL error. `code` is its `extensions.code` (SPEC §9: LEASE_NOT_HELD,
 * VALIDATION_FAILED, …; `UNKNOWN` when absent), `details` the rest of its extensions (`errors` of a
 * VALIDATION_FAILED, `index` of a refused batch step), `errors` every error of the response.
 */
export class GraphQLRequestError extends ClientError {
  override name = 'GraphQLRequestError';
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(
    readonly errors: readonly GraphQLErrorEntry[],
    readonly status: number,
  ) {
    const first = errors[0];
    super(first.message);
    const { code, ...details } = first.extensions ?? {};
    this.code = typeof code === 'string' ? code : 'UNKNOWN';
    this.details = details;
  }
}

/**
 * No GraphQL answer: connection refused or reset, a timeout, an abort, or an HTTP answer without a
 * GraphQL body (a proxy's 502). `cause` is what the transport saw.
 */
export class UnreachableError extends ClientError {
  override name = 'UnreachableError';
}
