/**
 * Cross-process events through PostgreSQL LISTEN/NOTIFY. Engine commands call `pg_notify` inside their
 * transaction, so an event is delivered only if (and after) the change commits, and every engine
 * process sharing the database hears it. One dedicated connection per process listens; it reconnects
 * when the connection drops.
 */
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { EVENTS_CHANNEL, type EngineEvent } from '../common/index.js';

export class Notifier extends EventEmitter {
  private client: pg.Client | null = null;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(private readonly url: string) {
    super();
    this.setMaxListeners(0);
  }

  /** Whether the LISTEN connection is up (/readyz). */
  get listening(): boolean {
    return this.client !== null;
  }

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('notification', (msg) => {
      if (msg.channel !== EVENTS_CHANNEL || !msg.payload) return;
      try {
        this.emit('event', JSON.parse(msg.payload) as EngineEvent);
      } catch {
        // a malformed payload is not ours to act on
      }
    });
    client.on('error', () => this.scheduleReconnect());
    client.on('end', () => this.scheduleReconnect());
    await client.connect();
    await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    this.client = client;
    this.emit('ready');
  }

  private scheduleReconnect() {
    if (this.closed || this.retryTimer) return;
    this.client = null;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect().catch(() => this.scheduleReconnect());
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
