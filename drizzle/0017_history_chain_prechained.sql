-- A set-based chain append (issue 18: the claim's TASK_LEASED rows). The canonical text of a history row
-- is now one function of the row's values, so a statement can compute a row's chain values for many
-- instances at once — one UPDATE of history_heads for the whole set — and insert the rows already
-- chained. abada_history_canonical_at (the trigger's and verifyAudit's definition) is this function, so
-- the chain is still written and checked by one definition.
CREATE OR REPLACE FUNCTION abada_history_canonical_of(
  project_id text, process_instance_id uuid, seq integer, event_type text, actor text, at timestamptz,
  task_id uuid, attempt integer, sequence integer, approval_id uuid, incident_id uuid, data jsonb
) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'projectId', project_id,
    'processInstanceId', process_instance_id,
    'seq', seq,
    'eventType', event_type,
    'actor', actor,
    'at', to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'taskId', task_id,
    'attempt', attempt,
    'sequence', sequence,
    'approvalId', approval_id,
    'incidentId', incident_id,
    'data', data
  )::text
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION abada_history_canonical_at(h history, at_seq integer) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT abada_history_canonical_of(h.project_id, h.process_instance_id, at_seq, h.event_type, h.actor, h.at,
                                    h.task_id, h.attempt, h.sequence, h.approval_id, h.incident_id, h.data)
$$;
--> statement-breakpoint
-- Rows inserted already chained (hash set by the statement that moved their instance's head in the same
-- statement) skip the per-row trigger; every other row (hash '') is chained by it as before. The WHEN is
-- evaluated without calling the function. verifyAudit recomputes every hash either way, and
-- history_instance_seq_uq refuses a seq taken twice.
DROP TRIGGER history_chain ON history;
--> statement-breakpoint
CREATE TRIGGER history_chain BEFORE INSERT ON history FOR EACH ROW WHEN (NEW.hash = '') EXECUTE FUNCTION abada_history_chain();
--> statement-breakpoint
-- Every history row moves its instance's head: room on the head's page lets that UPDATE be HOT (no new
-- primary-key entry per appended row). Heads written from now on get the room.
ALTER TABLE history_heads SET (fillfactor = 50);
