/** The events engine processes announce to each other (NOTIFY) and what a listener looks like. */
import type { EventEmitter } from 'node:events';

export const EVENTS_CHANNEL = 'abada_events';

export type EngineEvent =
  | {
      type: 'task';
      taskId: string;
      processInstanceId: string;
      projectId: string;
      state: string;
      topic: string;
    }
  | {
      type: 'approval';
      approvalId: string;
      projectId: string;
      change: 'opened' | 'decided' | 'escalated' | 'retired' | 'revoked' | 'expired' | 'voided';
    }
  | { type: 'incident'; incidentId: string; projectId: string | null }
  | { type: 'job'; kind: string }
  /** a principal changed: every engine drops its cached identity; disabled/rotated close its sockets */
  | { type: 'principal'; principalId: string; change: 'updated' | 'disabled' | 'rotated' };

/** Where commands and subscribers hear events: `'event'` (an EngineEvent) and `'ready'` (listening again). */
export type EventFeed = Pick<EventEmitter, 'on' | 'off' | 'listenerCount'>;
