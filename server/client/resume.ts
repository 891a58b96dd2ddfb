/**
 * A subscription that survives lost connections without losing or repeating events (SPEC §13): it keeps
 * the `eventCursor` of the last payload and, whenever the connection drops, connects again and
 * re-subscribes with `after:` that cursor, so the engine replays what was committed in between. (A
 * graphql-ws client's own retry would re-send the first variables and replay from the start again.)
 * A refusal from the engine — a pruned or unknown cursor, a refused token — is not retried: it goes to
 * `onRefused` and the subscription ends.
 */
import type { Client } from 'graphql-ws';
import type { TadaDocumentNode } from './graphql.js';
import { queryText } from './print.js';
import { backoffMs } from './retry.js';
import { wsClient } from './ws.js';

export interface ResumableOptions<T> {
  /** the engine's base URL */
  url: string;
  token: string | null;
  /** a subscription document that declares `$after: String` and passes it to its field */
  // biome-ignore lint/suspicious/noExplicitAny: a document's variables may be any input shape
  query: TadaDocumentNode<T, any> | string;
  variables?: Record<string, unknown>;
  /** the cursor to start after (null or absent: live from now) */
  after?: string | null;
  /** where a payload carries its eventCursor */
  cursorOf: (data: T) => string | null | undefined;
  onEvent: (data: T) => void;
  /** the engine refused (e.g. VALIDATION_FAILED for a pruned cursor): the subscription has ended */
  onRefused?: (errors: readonly unknown[]) => void;
  /** the connection dropped; the subscription resumes after a short backoff */
  onDisconnect?: (reason: unknown) => void;
}

export interface ResumableSubscription {
  /** the eventCursor of the last payload received (or the `after` it started with) */
  readonly cursor: string | null;
  /** how many times it connected again after a lost connection */
  readonly resumes: number;
  /** drops the connection at once (when there is one), as a network failure would; it resumes */
  interrupt(): void;
  dispose(): Promise<void>;
}

/** Subscribes, and resumes with `after:` the last cursor after every lost connection. */
export function subscribeResumable<T>(opts: ResumableOptions<T>): ResumableSubscription {
  let cursor = opts.after ?? null;
  let resumes = 0;
  let failures = 0;
  let client: Client | null = null;
  let stopped = false;
  let connected = false;
  let timer: NodeJS.Timeout | null = null;
  const query = queryText(opts.query);

  const lost = (reason: unknown) => {
    if (stopped) return;
    opts.onDisconnect?.(reason);
    void client?.dispose();
    client = null;
    timer = setTimeout(
      () => {
        timer = null;
        resumes++;
        start();
      },
      backoffMs(failures++, 100, 5000),
    );
  };
  const refused = (errors: readonly unknown[]) => {
    stopped = true;
    void client?.dispose();
    opts.onRefused?.(errors);
  };
  const start = () => {
    if (stopped) return;
    connected = false;
    const c = wsClient(opts.url, opts.token, {
      retryAttempts: 0,
      lazy: true,
      on: {
        connected: () => {
          if (client === c) connected = true;
        },
      },
    });
    client = c;
    c.subscribe<T>(
      { query, variables: { ...opts.variables, after: cursor } },
      {
        next: (r) => {
          if (r.errors?.length) return refused(r.errors);
          if (r.data == null) return;
          failures = 0;
          cursor = opts.cursorOf(r.data) ?? cursor;
          opts.onEvent(r.data);
        },
        // GraphQL errors (an array) and a refused token (close 4401/4403) are the engine's answer;
        // anything else is the connection.
        error: (e) => {
          const code = (e as { code?: number }).code;
          if (Array.isArray(e) || code === 4401 || code === 4403) refused(Array.isArray(e) ? e : [e]);
          else if (client === c) lost(e);
        },
        complete: () => client === c && lost(new Error('the engine ended the subscription')),
      },
    );
  };
  start();
  return {
    get cursor() {
      return cursor;
    },
    get resumes() {
      return resumes;
    },
    interrupt() {
      // only an established connection: ws throws on a socket closed while it is still connecting
      if (connected) client?.terminate();
    },
    async dispose() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await client?.dispose();
    },
  };
}
