-- Time-ordered ids (UUIDv7, RFC 9562) for process instances and external tasks: 48 bits of Unix
-- milliseconds, version 7, variant 10, 74 random bits. Rows made together sit together in every index keyed
-- by them — history (process_instance_id, seq), history_heads, steps (task_id, …) — so appending to a recent
-- instance touches pages already in memory however large the history grows. Written in SQL (not
-- PostgreSQL 18's uuidv7()) so that PostgreSQL 15 and later run it. Existing ids stay as they are.
CREATE OR REPLACE FUNCTION abada_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
              placing substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
              FROM 1 FOR 6),
      52, 1), 53, 1), 'hex')::uuid
$$;
--> statement-breakpoint
ALTER TABLE "process_instances" ALTER COLUMN "id" SET DEFAULT abada_uuid_v7();--> statement-breakpoint
ALTER TABLE "external_tasks" ALTER COLUMN "id" SET DEFAULT abada_uuid_v7();
