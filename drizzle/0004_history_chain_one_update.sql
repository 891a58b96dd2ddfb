ALTER TABLE "history_heads" ADD COLUMN "prev_hash" text DEFAULT '' NOT NULL;--> statement-breakpoint
-- The canonical text of a history row at a given seq (the trigger knows the seq only inside its UPDATE).
-- abada_history_canonical(h) — what verifyAudit recomputes — is this function at the row's own seq, so
-- the chain is still written and checked by one definition.
CREATE OR REPLACE FUNCTION abada_history_canonical_at(h history, at_seq integer) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'projectId', h.project_id,
    'processInstanceId', h.process_instance_id,
    'seq', at_seq,
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
CREATE OR REPLACE FUNCTION abada_history_canonical(h history) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT abada_history_canonical_at(h, h.seq)
$$;
--> statement-breakpoint
-- One statement per appended row instead of three: the head's UPDATE takes the instance's chain lock,
-- moves seq on and computes the new hash from the old one (every SET expression sees the old row), and
-- RETURNING hands back the new seq, the previous hash and the new hash. The first row of an instance
-- inserts the head; a concurrent first insert loses ON CONFLICT and goes round again as an UPDATE.
CREATE OR REPLACE FUNCTION abada_history_chain() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  LOOP
    UPDATE history_heads h
       SET prev_hash = h.hash,
           seq = h.seq + 1,
           hash = encode(sha256(convert_to(h.hash || abada_history_canonical_at(NEW, h.seq + 1), 'UTF8')), 'hex')
     WHERE h.process_instance_id = NEW.process_instance_id
    RETURNING h.seq, h.prev_hash, h.hash INTO NEW.seq, NEW.prev_hash, NEW.hash;
    IF FOUND THEN
      RETURN NEW;
    END IF;
    INSERT INTO history_heads (process_instance_id, seq, prev_hash, hash)
    VALUES (NEW.process_instance_id, 1, '',
            encode(sha256(convert_to(abada_history_canonical_at(NEW, 1), 'UTF8')), 'hex'))
    ON CONFLICT (process_instance_id) DO NOTHING
    RETURNING seq, prev_hash, hash INTO NEW.seq, NEW.prev_hash, NEW.hash;
    IF FOUND THEN
      RETURN NEW;
    END IF;
  END LOOP;
END
$$;
