-- A history row may carry the later events of its commit for its instance (SPEC §8): `events`, a JSON
-- array of {eventType, actor, taskId, attempt, sequence, approvalId, incidentId, data}, null when the
-- row has one event. Rows written before keep null, so their canonical text, and their hash, are as
-- they were: both shapes verify in one chain.
ALTER TABLE "history" ADD COLUMN "events" jsonb;--> statement-breakpoint
-- The canonical text of a row: as before, plus 'events' when the row carries any (the trigger chains it
-- and verifyAudit recomputes it through abada_history_canonical_at, one definition for both).
CREATE OR REPLACE FUNCTION abada_history_canonical_at(h history, at_seq integer) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN h.events IS NULL THEN base
              ELSE (base::jsonb || jsonb_build_object('events', h.events))::text END
    FROM abada_history_canonical_of(h.project_id, h.process_instance_id, at_seq, h.event_type, h.actor, h.at,
                                    h.task_id, h.attempt, h.sequence, h.approval_id, h.incident_id, h.data) AS base
$$;
--> statement-breakpoint
-- One row per event, for readers: each row's own event (idx 0), then those it carries (idx 1, 2, …).
CREATE VIEW history_events AS
  SELECT h.id, h.project_id, h.process_instance_id, h.seq, 0 AS idx, h.event_type, h.actor, h.at,
         h.task_id, h.attempt, h.sequence, h.approval_id, h.incident_id, h.data, h.hash
    FROM history h
  UNION ALL
  SELECT h.id, h.project_id, h.process_instance_id, h.seq, e.idx::int, e.v->>'eventType', e.v->>'actor', h.at,
         (e.v->>'taskId')::uuid, (e.v->>'attempt')::int, (e.v->>'sequence')::int,
         (e.v->>'approvalId')::uuid, (e.v->>'incidentId')::uuid, coalesce(e.v->'data', '{}'::jsonb), h.hash
    FROM history h CROSS JOIN LATERAL jsonb_array_elements(h.events) WITH ORDINALITY AS e(v, idx)
   WHERE h.events IS NOT NULL;
