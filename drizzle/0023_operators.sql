-- A repeated FETCH_REJECTED bumps one OPEN incident (count, last_seen_at) instead of opening another:
-- the de-duplication key is unique among OPEN incidents, so concurrent rejections meet on it.
ALTER TABLE "incidents" ADD COLUMN "count" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "incidents" ADD COLUMN "last_seen_at" timestamp with time zone;--> statement-breakpoint
UPDATE "incidents" SET "last_seen_at" = "created_at";--> statement-breakpoint
ALTER TABLE "incidents" ALTER COLUMN "last_seen_at" SET DEFAULT now();--> statement-breakpoint
ALTER TABLE "incidents" ALTER COLUMN "last_seen_at" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "incidents" ADD COLUMN "dedupe_key" text;--> statement-breakpoint
CREATE UNIQUE INDEX "incidents_open_dedupe_uq" ON "incidents" ("dedupe_key")
  WHERE "state" = 'OPEN' AND "dedupe_key" IS NOT NULL;--> statement-breakpoint
-- Prices change through setModelPrice: each change is a new row (effective_from), with who set it.
ALTER TABLE "model_prices" ADD COLUMN "set_by" text;--> statement-breakpoint
-- stepByIdempotencyKey finds the steps that hold a key; only keyed writes are in this index.
CREATE INDEX "steps_idempotency_key_idx" ON "steps" ("idempotency_key")
  WHERE "idempotency_key" IS NOT NULL;
