/**
 * Cross-process events through PostgreSQL LISTEN/NOTIFY, on one dedicated connection per process that
 * reconnects when it drops. A NOTIFY sent while it is down is gone, so stream events (approvals,
 * incidents) are not taken from NOTIFY alone: the listener keeps the last position it emitted and, each
 * time it listens again, reads what was committed after it from `stream_events` before it says 'ready';
 * a hole (a position ahead of the next) is filled the same way. Each position is emitted once, in order;
 * task, job and principal events stay best-effort (their consumers re-read state on 'ready').
 */
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { type EngineEvent, EVENTS_CHANNEL, type StreamEvent } from '../common/index.js';

/** How a listening connection names itself in pg_stat_activity (tests find it there). */
const LISTENER_APPLICATION_NAME = 'abada-listener';
const CATCH_UP_PAGE = 500;

export class Notifier extends EventEmitter {
  private client: pg.Client | null = null;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  /** the last stream position emitted; null until the first connection read the head */
  private last: number | null = null;
  /** stream work (emit, catch up) runs one step at a time, in arrival order */
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly url: string) {
    super();
    this.setMaxListeners(0);
  }

  /** Whether the LISTEN connection is up (/readyz). */
  get listening(): boolean {
    return this.client !== null;
  }

  /** Connects and listens; after a drop, called again until it succeeds. */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: LISTENER_APPLICATION_NAME });
    client.on('notification', (msg) => {
      if (msg.channel !== EVENTS_CHANNEL || !msg.payload) return;
      let e: EngineEvent | StreamEvent;
      try {
        e = JSON.parse(msg.payload) as EngineEvent;
      } catch (err) {
        if (!(err instanceof SyntaxError)) throw err;
        return; // a malformed payload is not ours to act on
      }
      if ('position' in e && typeof e.position === 'number')
        this.serial(() => this.onStream(client, e as StreamEvent));
      else this.emit('event', e);
    });
    // only the connection in use (or one still connecting) may start a reconnect, not a stale one
    const lost = () => {
      if (this.client === client || this.client === null) this.scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
      // Listening first, then reading: anything committed after the read arrives as a NOTIFY.
      await this.serial(() => this.catchUp(client));
    } catch (e) {
      await client.end().catch(() => {});
      throw e;
    }
    this.client = client;
    this.emit('ready');
  }

  private serial(step: () => Promise<void>): Promise<void> {
    const run = this.chain.then(step);
    this.chain = run.catch(() => {});
    return run;
  }

  private async onStream(client: pg.Client, e: StreamEvent): Promise<void> {
    if (this.last !== null && e.position <= this.last) return; // already emitted by a catch-up
    if (this.last !== null && e.position > this.last + 1) {
      // a hole: read it from the table; if that fails, the reconnection's catch-up emits it and e
      try {
        await this.catchUp(client);
      } catch {
        this.scheduleReconnect();
        return;
      }
      if (e.position <= this.last) return;
    }
    this.last = e.position;
    this.emit('event', e);
  }

  /** Emits every stream event committed after the last one emitted (at the first start: none). */
  private async catchUp(client: pg.Client): Promise<void> {
    if (this.last === null) {
      const r = await client.query<{ position: string }>('SELECT position FROM stream_head WHERE id = 1');
      this.last = Number(r.rows[0]?.position ?? 0);
      return;
    }
    for (;;) {
      const from: number = this.last;
      const r = await client.query<{ position: string; payload: EngineEvent }>(
        'SELECT position, payload FROM stream_events WHERE position > $1 ORDER BY position LIMIT $2',
        [from, CATCH_UP_PAGE],
      );
      for (const row of r.rows) {
        const position = Number(row.position);
        this.last = position;
        this.emit('event', { ...row.payload, position });
      }
      if (r.rows.length < CATCH_UP_PAGE) return;
    }
  }

  private scheduleReconnect() {
    if (this.closed || this.retryTimer) return;
    const c = this.client;
    this.client = null;
    c?.end().catch(() => {});
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.start().catch(() => this.scheduleReconnect());
    }, 500);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const c = this.client;
    this.client = null;
    if (c) await c.end().catch(() => {});
  }
}
