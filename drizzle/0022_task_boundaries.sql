ALTER TABLE "external_tasks" ADD COLUMN "boundary_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "external_tasks" ADD COLUMN "boundary" text;--> statement-breakpoint
CREATE INDEX "external_tasks_boundary_idx" ON "external_tasks" USING btree ("boundary_at") WHERE boundary_at IS NOT NULL AND state IN ('OPEN', 'LEASED', 'AWAITING_APPROVAL', 'AWAITING_CHILD');