/**
 * The open graphql-ws connections of this engine, by principal. When a principal is disabled or its token
 * rotated (heard through NOTIFY, from whichever engine made the change) its connections here are closed:
 * 4401 (graphql-ws clients do not retry it) with a reason saying what to do. After its groups or topics
 * change they are closed with 4409, which clients retry, authenticating again under the new groups.
 */
import type { WebSocket } from 'ws';
import type { EngineEvent, EventFeed } from '../engine/common/index.js';

const CLOSE = {
  DISABLED: { code: 4401, reason: 'Unauthorized: the principal was disabled' },
  ROTATED: { code: 4401, reason: 'Unauthorized: the token was rotated; reconnect with the new token' },
  UPDATED: { code: 4409, reason: 'The principal changed; reconnect' },
} as const;

export class Sessions {
  private readonly byPrincipal = new Map<string, Set<WebSocket>>();

  constructor(feed: EventFeed | null) {
    feed?.on('event', (e: EngineEvent) => {
      if (e.type !== 'principal') return;
      const how =
        e.change === 'disabled' ? CLOSE.DISABLED : e.change === 'rotated' ? CLOSE.ROTATED : CLOSE.UPDATED;
      const set = this.byPrincipal.get(e.principalId);
      this.byPrincipal.delete(e.principalId);
      for (const socket of set ?? []) socket.close(how.code, how.reason);
    });
  }

  add(principalId: string, socket: WebSocket): void {
    const set = this.byPrincipal.get(principalId) ?? new Set<WebSocket>();
    this.byPrincipal.set(principalId, set);
    set.add(socket);
    socket.once('close', () => {
      set.delete(socket);
      if (set.size === 0 && this.byPrincipal.get(principalId) === set) this.byPrincipal.delete(principalId);
    });
  }
}
