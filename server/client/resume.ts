/**
 * A subscription that survives lost connections without losing or repeating events (SPEC §13): after a
 * drop it re-subscribes with `after:` the last payload's `eventCursor`, so the engine replays what was
 * committed in between (graphql-ws's own retry would re-send the first variables). UNAVAILABLE is
 * retried like a lost connection; a refusal (a pruned cursor, a refused token) goes to `onRefused` and
 * ends the subscription.
 */
import type { Client } from 'graphql-ws';
import { queryText, type TadaDocumentNode } from './graphql.js';
import { backoffMs } from './retry.js';
import { wsClient } from './ws.js';

export interface ResumableOptions<T> {
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
  /** the engine refused (e.g. a pruned cursor): the subscription has ended */
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

export function subscribeResumable<T>(opts: ResumableOptions<T>): ResumableSubscription {
  return new Resumable(opts);
}

class Resumable<T> implements ResumableSubscription {
  cursor: string | null;
  resumes = 0;
  private failures = 0;
  private client: Client | null = null;
  private connected = false;
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly query: string;

  constructor(private readonly opts: ResumableOptions<T>) {
    this.cursor = opts.after ?? null;
    this.query = queryText(opts.query);
    this.start();
  }

  private start() {
    if (this.stopped) return;
    this.connected = false;
    const c = wsClient(this.opts.url, this.opts.token, {
      retryAttempts: 0,
      lazy: true,
      on: {
        connected: () => {
          if (this.client === c) this.connected = true;
        },
      },
    });
    this.client = c;
    c.subscribe<T>(
      { query: this.query, variables: { ...this.opts.variables, after: this.cursor } },
      {
        next: (r) => {
          if (r.errors?.length) return unavailable(r.errors) ? this.lost(r.errors) : this.refused(r.errors);
          if (r.data == null) return;
          this.failures = 0;
          this.cursor = this.opts.cursorOf(r.data) ?? this.cursor;
          this.opts.onEvent(r.data);
        },
        // GraphQL errors (an array) and a refused token (close 4401/4403) are the engine's answer;
        // anything else is the connection.
        error: (e) => {
          const code = (e as { code?: number }).code;
          if ((Array.isArray(e) && !unavailable(e)) || code === 4401 || code === 4403)
            this.refused(Array.isArray(e) ? e : [e]);
          else if (this.client === c) this.lost(e);
        },
        complete: () => this.client === c && this.lost(new Error('the engine ended the subscription')),
      },
    );
  }

  private lost(reason: unknown) {
    if (this.stopped) return;
    this.opts.onDisconnect?.(reason);
    void this.client?.dispose();
    this.client = null;
    const wait = backoffMs(this.failures++, 100, 5000);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.resumes++;
      this.start();
    }, wait);
  }

  private refused(errors: readonly unknown[]) {
    this.stopped = true;
    void this.client?.dispose();
    this.opts.onRefused?.(errors);
  }

  interrupt() {
    // only an established connection: ws throws on a socket closed while it is still connecting
    if (this.connected) this.client?.terminate();
  }

  async dispose() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.client?.dispose();
  }
}

/** UNAVAILABLE (the database is gone for a moment, SPEC §9) is the connection's trouble, not a refusal. */
function unavailable(errors: readonly unknown[]): boolean {
  return (
    errors.length > 0 &&
    errors.every((e) => (e as { extensions?: { code?: unknown } }).extensions?.code === 'UNAVAILABLE')
  );
}
