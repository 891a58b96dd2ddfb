-- Durable, ordered approval and incident events (SPEC §13): see server/db/tables/stream.ts.
CREATE TABLE "stream_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"position" bigint,
	"type" text NOT NULL,
	"change" text NOT NULL,
	"object_id" uuid NOT NULL,
	"project_id" text,
	"payload" jsonb NOT NULL,
	"committed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "stream_head" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"position" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "stream_head_one_row" CHECK ("stream_head"."id" = 1)
);
--> statement-breakpoint
CREATE UNIQUE INDEX "stream_events_position_idx" ON "stream_events" USING btree ("position");--> statement-breakpoint
CREATE INDEX "stream_events_object_idx" ON "stream_events" USING btree ("object_id","position");--> statement-breakpoint
CREATE INDEX "stream_events_committed_idx" ON "stream_events" USING btree ("committed_at");--> statement-breakpoint
-- The event stream (SPEC §13). `notify()` inserts a row with no position in the transaction of the
-- change; this deferred trigger runs as that transaction commits, after every statement of it, and
-- takes the next position from the one head row. The head row's lock is held from here until COMMIT
-- ends, so a transaction that commits later always gets a larger position, a rolled-back one leaves
-- no hole, and a reader that sees position n committed sees every position below it too. Taking the
-- lock last keeps it for microseconds and never while waiting on another row (no deadlock).
INSERT INTO "stream_head" ("id", "position") VALUES (1, 0);--> statement-breakpoint
CREATE OR REPLACE FUNCTION abada_stream_position() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE p bigint;
BEGIN
  UPDATE stream_head SET position = position + 1 WHERE id = 1 RETURNING position INTO p;
  UPDATE stream_events SET position = p, committed_at = clock_timestamp() WHERE id = NEW.id;
  PERFORM pg_notify('abada_events', (NEW.payload || jsonb_build_object('position', p))::text);
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE CONSTRAINT TRIGGER stream_position AFTER INSERT ON "stream_events"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION abada_stream_position();
