/** The events engine processes announce to each other (NOTIFY) and what a listener looks like. */
import type { EventEmitter } from 'node:events';
import type { StreamPayload } from '../../db/schema.js';

export type EngineEvent =
  | {
      type: 'task';
      taskId: string;
      processInstanceId: string;
      projectId: string;
      state: string;
      topic: string;
    }
  /** approval and incident events: durable, in the stream (see events/notify.ts) */
  | StreamPayload
  | { type: 'job'; kind: string }
  /** a principal changed: every engine drops its cached identity; disabled/rotated close its sockets */
  | { type: 'principal'; principalId: string; change: 'updated' | 'disabled' | 'rotated' };

/** A stream event as listeners hear it: with its position (commit order, no holes). */
export type StreamEvent = StreamPayload & { position: number };

/**
 * Where commands and subscribers hear events: `'event'` (an EngineEvent; approval and incident events
 * are StreamEvents, each position once and in order) and `'ready'` (listening again, caught up).
 */
export type EventFeed = Pick<EventEmitter, 'on' | 'off' | 'listenerCount'>;
