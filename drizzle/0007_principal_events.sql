-- What admins did to principals (SPEC §11 "Principals' lifecycle"): created, updated, disabled, token
-- rotated, with the admin who did it. The history table is per process instance, so principals keep
-- their own append-only record. It never holds a token or a token hash.
CREATE TABLE "principal_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"principal_id" uuid NOT NULL,
	"project_id" text,
	"action" text NOT NULL,
	"actor_id" uuid NOT NULL,
	"actor_name" text NOT NULL,
	"before" jsonb,
	"after" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "principal_events" ADD CONSTRAINT "principal_events_principal_id_principals_id_fk" FOREIGN KEY ("principal_id") REFERENCES "public"."principals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "principal_events_principal_idx" ON "principal_events" USING btree ("principal_id","created_at");--> statement-breakpoint
CREATE OR REPLACE FUNCTION abada_principal_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'principal_events is append-only';
END
$$;
--> statement-breakpoint
CREATE TRIGGER principal_events_append_only BEFORE UPDATE OR DELETE ON principal_events FOR EACH ROW EXECUTE FUNCTION abada_principal_events_append_only();
