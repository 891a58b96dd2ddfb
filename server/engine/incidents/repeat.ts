/**
 * Incidents of a condition that repeats (FETCH_REJECTED): one OPEN incident per de-duplication key, with
 * a count and when last seen, or a misconfigured worker polling every second opens 3,600 an hour. The key
 * is unique among OPEN incidents (a partial unique index), so two engines rejecting one poll at once meet
 * on it; once a person resolves the incident, the next occurrence opens a new one.
 */
import { sql } from 'drizzle-orm';
import type { IncidentRow } from '../../db/schema.js';
import { type Executor, query } from '../common/index.js';
import { notify } from '../events/index.js';
import type { OpenIncident } from './incidents.js';

type RepeatedIncident = Pick<OpenIncident, 'projectId' | 'type' | 'message' | 'workerId'> & {
  /** what makes two occurrences the same incident, e.g. principal, topic and reason */
  dedupeKey: string;
};

/**
 * Opens the incident, or bumps the open one with the same key (count + 1, last seen now, the latest
 * message and worker). Only an opening is announced (incidentOpened); a bump is not news.
 */
export async function openOrBumpIncident(ex: Executor, i: RepeatedIncident) {
  const [row] = await query<Pick<IncidentRow, 'id' | 'count'> & { opened: boolean }>(
    ex,
    sql`INSERT INTO incidents (project_id, type, message, worker_id, dedupe_key)
        VALUES (${i.projectId}, ${i.type}, ${i.message}, ${i.workerId ?? null}, ${i.dedupeKey})
        ON CONFLICT (dedupe_key) WHERE state = 'OPEN' AND dedupe_key IS NOT NULL
        DO UPDATE SET count = incidents.count + 1, last_seen_at = now(),
          message = EXCLUDED.message, worker_id = EXCLUDED.worker_id
        RETURNING id, count, (xmax = 0) AS opened`,
  );
  if (row.opened) await notify(ex, { type: 'incident', incidentId: row.id, projectId: i.projectId });
  return row;
}
