/** A graphql-ws subscriber for tests: collects events, waits for them, and reports a refused connection. */
import type { Client } from 'graphql-ws';
import { subscribe as subscribeWs, wsClient } from '../../server/client/index.js';
import type { Untyped } from './untyped.js';

export interface Subscriber<T = Untyped> {
  events: { at: number; data: T }[];
  errors: unknown[];
  /** resolves with the first event matching `pred` (already received or to come), or rejects after ms */
  next(pred?: (d: T) => boolean, ms?: number): Promise<{ at: number; data: T }>;
  /** resolves once the server acknowledged the connection */
  connected: Promise<void>;
  /** set when the server closed the socket (code, reason) */
  closed: { code: number; reason: string } | null;
  dispose(): Promise<void>;
}

export function subscribe<T = Untyped>(
  baseUrl: string,
  token: string | null,
  query: string,
  variables: Record<string, unknown> = {},
): Subscriber<T> {
  const waiters: { pred: (d: T) => boolean; resolve: (e: { at: number; data: T }) => void }[] = [];
  let onConnected: () => void = () => {};
  let onRefused: (e: unknown) => void = () => {};
  const sub: Subscriber<T> = {
    events: [],
    errors: [],
    closed: null,
    connected: new Promise<void>((resolve, reject) => {
      onConnected = resolve;
      onRefused = reject;
    }),
    next(pred = () => true, ms = 3000) {
      const hit = sub.events.find((e) => pred(e.data));
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const w = { pred, resolve };
        waiters.push(w);
        setTimeout(() => {
          const i = waiters.indexOf(w);
          if (i >= 0) {
            waiters.splice(i, 1);
            reject(new Error(`no matching event within ${ms} ms (got ${sub.events.length})`));
          }
        }, ms);
      });
    },
    async dispose() {
      unsubscribe();
      await client.dispose();
    },
  };
  const client: Client = wsClient(baseUrl, token, {
    lazy: false,
    retryAttempts: 0,
    on: {
      connected: () => onConnected(),
      closed: (e) => {
        const ev = e as { code?: number; reason?: string };
        sub.closed = { code: ev.code ?? 0, reason: ev.reason ?? '' };
        onRefused(new Error(`closed ${ev.code} ${ev.reason}`));
      },
    },
    onNonLazyError: () => {},
  });
  const unsubscribe = subscribeWs<T>(client, query, variables, {
    next: (r) => {
      if (r.errors?.length) {
        sub.errors.push(r.errors);
        return;
      }
      const e = { at: Date.now(), data: r.data as T };
      sub.events.push(e);
      for (const w of [...waiters]) {
        if (w.pred(e.data)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(e);
        }
      }
    },
    error: (err) => sub.errors.push(err),
    complete: () => {},
  });
  sub.connected.catch(() => {});
  return sub;
}

/**
 * How long a new subscription is given to start on the server before the test acts. graphql-ws
 * acknowledges the connection, not the subscription: the server listens only once it has parsed,
 * authorised and started the operation (a few milliseconds), and tells the client nothing when it has.
 * A subscriber that must receive something could be probed with an event; one that must receive nothing
 * cannot, so all wait this long. (A server-side count of started subscriptions would make this a
 * condition; it belongs to server/graphql.)
 */
export const STARTED_MS = 300;

/**
 * How long a subscriber is watched receiving nothing (a negative) after a subscriber of the same process
 * received the event: both hear the same NOTIFY in the same fan-out, so only the filtering load of one
 * event (milliseconds) can separate them.
 */
export const QUIET_MS = 200;

export const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
