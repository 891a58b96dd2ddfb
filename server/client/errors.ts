/** What a GraphQL call can end with besides data: a refusal with a SPEC §9 code, or no answer at all. */

export interface GraphQLErrorEntry {
  message: string;
  path?: readonly (string | number)[];
  extensions?: { code?: string; [key: string]: unknown };
}

export class ClientError extends Error {
  override name = 'ClientError';
}

/**
 * The engine answered with GraphQL errors: `code` is the first one's `extensions.code` (SPEC §9;
 * `UNKNOWN` when absent), `details` the rest of its extensions (`errors`, a refused batch step's `index`).
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

/** No GraphQL answer (refused, reset, timeout, abort, a proxy's 502); `cause`: what the transport saw. */
export class UnreachableError extends ClientError {
  override name = 'UnreachableError';
}
