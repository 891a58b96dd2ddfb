/** The CLI's engine calls: the shared client on ABADA_URL and ABADA_TOKEN, its errors made exit codes. */
import {
  createClient,
  type GraphQLErrorEntry,
  GraphQLRequestError,
  type ResultOf,
  type TadaDocumentNode,
  UnreachableError,
  type VariablesOf,
} from '../client/index.js';
import { CliError, EXIT, type Io, usage } from './args.js';

export interface GqlError extends GraphQLErrorEntry {
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

// biome-ignore lint/suspicious/noExplicitAny: a document's variables may be any input shape
type AnyDocument = TadaDocumentNode<any, any>;

/** One GraphQL call as the principal in ABADA_TOKEN; refusals and an unreachable engine become CliErrors. */
export async function gql<D extends AnyDocument>(
  io: Io,
  doc: D,
  variables: VariablesOf<D>,
): Promise<ResultOf<D>> {
  const base = io.env.ABADA_URL?.trim();
  if (!base) throw usage('Set ABADA_URL to the engine base URL, e.g. http://127.0.0.1:3000.');
  const client = createClient({
    url: base,
    token: io.env.ABADA_TOKEN?.trim(),
    timeoutMs: Number(io.env.ABADA_CLI_TIMEOUT_MS ?? 30_000),
  });
  try {
    return await client.request(doc, variables);
  } catch (e) {
    if (e instanceof GraphQLRequestError) throw new ApiError(e.errors[0] as GqlError);
    if (e instanceof UnreachableError)
      throw new CliError(EXIT.UNREACHABLE, `Cannot reach ${client.endpoint}: ${e.message}`, {
        code: 'UNREACHABLE',
      });
    throw e;
  }
}
