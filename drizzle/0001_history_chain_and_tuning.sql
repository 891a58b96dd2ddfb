-- The history hash chain (SPEC §8). One function defines the canonical text of a row; the insert
-- trigger and verifyAudit both use it, so the chain is computed and re-checked by the same code.
CREATE OR REPLACE FUNCTION abada_history_canonical(h history) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object(
    'projectId', h.project_id,
    'processInstanceId', h.process_instance_id,
    'seq', h.seq,
    'eventType', h.event_type,
    'actor', h.actor,
    'at', to_char(h.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'taskId', h.task_id,
    'attempt', h.attempt,
    'sequence', h.sequence,
    'approvalId', h.approval_id,
    'incidentId', h.incident_id,
    'data', h.data
  )::text
$$;
--> statement-breakpoint
-- Appends are serialised per instance by the row lock on history_heads (taken last, after any task or
-- approval lock, so it never inverts the engine's lock order).
CREATE OR REPLACE FUNCTION abada_history_chain() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  head_seq integer;
  head_hash text;
BEGIN
  INSERT INTO history_heads AS h (process_instance_id, seq, hash)
  VALUES (NEW.process_instance_id, 1, '')
  ON CONFLICT (process_instance_id) DO UPDATE SET seq = h.seq + 1
  RETURNING h.seq, h.hash INTO head_seq, head_hash;
  NEW.seq := head_seq;
  NEW.prev_hash := head_hash;
  NEW.hash := encode(sha256(convert_to(head_hash || abada_history_canonical(NEW), 'UTF8')), 'hex');
  UPDATE history_heads SET hash = NEW.hash WHERE process_instance_id = NEW.process_instance_id;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER history_chain BEFORE INSERT ON history FOR EACH ROW EXECUTE FUNCTION abada_history_chain();
--> statement-breakpoint
-- History is append-only for the application; verifyAudit catches anyone who gets around this.
CREATE OR REPLACE FUNCTION abada_history_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'history is append-only';
END
$$;
--> statement-breakpoint
CREATE TRIGGER history_append_only BEFORE UPDATE OR DELETE ON history FOR EACH ROW EXECUTE FUNCTION abada_history_append_only();
--> statement-breakpoint
-- The claim statement updates external_tasks rows in place many times; room on the page lets those
-- updates stay HOT, and aggressive autovacuum keeps dead index entries from piling up under the
-- partial indexes.
ALTER TABLE external_tasks SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_cost_delay = 0);
--> statement-breakpoint
ALTER TABLE steps SET (fillfactor = 80);
--> statement-breakpoint
INSERT INTO projects (id, name) VALUES ('default', 'Default project') ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO model_prices (model, effective_from, input_per_mtok_usd, output_per_mtok_usd) VALUES
  ('gemini-3.6-flash', '2026-01-01T00:00:00Z', 0.30, 2.50),
  ('gemini/gemini-3.6-flash', '2026-01-01T00:00:00Z', 0.30, 2.50),
  ('gpt-4.1-mini', '2026-01-01T00:00:00Z', 0.40, 1.60),
  ('gpt-4.1', '2026-01-01T00:00:00Z', 2.00, 8.00),
  ('scripted-model', '2026-01-01T00:00:00Z', 1.00, 2.00)
ON CONFLICT DO NOTHING;
