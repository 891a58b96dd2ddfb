/** The CLI's GraphQL client: ABADA_URL (base URL, /graphql added) and ABADA_TOKEN, errors to exit codes. */
import { CliError, EXIT, type Io } from './args.js';

export interface GqlError {
  message: string;
  extensions?: { code?: string; errors?: { code?: string; line?: number | null; message: string }[] };
}

export class ApiError extends CliError {
  constructor(readonly error: GqlError) {
    const code = error.extensions?.code ?? 'ERROR';
    super(code === 'UNAUTHENTICATED' ? EXIT.UNREACHABLE : EXIT.REFUSED, `${code}: ${error.message}`, {
      code,
      message: error.message,
      ...(error.extensions?.errors ? { errors: error.extensions.errors } : {}),
    });
  }
}

export function endpoint(env: Io['env']): string {
  const base = env.ABADA_URL?.trim();
  if (!base)
    throw new CliError(EXIT.USAGE, 'Set ABADA_URL to the engine base URL, e.g. http://127.0.0.1:3000.');
  const url = base.replace(/\/+$/, '');
  return url.endsWith('/graphql') ? url : `${url}/graphql`;
}

export async function gql<T>(io: Io, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const url = endpoint(io.env);
  const token = io.env.ABADA_TOKEN?.trim();
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(Number(io.env.ABADA_CLI_TIMEOUT_MS ?? 30_000)),
    });
  } catch (e) {
    throw new CliError(EXIT.UNREACHABLE, `Cannot reach ${url}: ${(e as Error).message}`, {
      code: 'UNREACHABLE',
    });
  }
  let body: { data?: T; errors?: GqlError[] };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    throw new CliError(EXIT.UNREACHABLE, `${url} answered HTTP ${res.status} without GraphQL.`, {
      code: 'UNREACHABLE',
    });
  }
  if (body.errors?.length) throw new ApiError(body.errors[0]);
  if (!body.data) throw new CliError(EXIT.UNREACHABLE, `${url} answered HTTP ${res.status} with no data.`);
  return body.data;
}
