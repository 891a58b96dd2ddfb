-- SPEC §11 Guarded and Reconciled: a step's purpose (CALL, or the engine's PRECONDITION / LOOKUP reads
-- of a guarded call) and whether a lookup settled it; an approval keeps the precondition's answer at
-- proposal time (facts, sealed) and the tool server's own description of the tool; a task keeps when
-- its current lease began (a precondition read must be journaled under the current lease).
ALTER TABLE "approvals" ADD COLUMN "facts_enc" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "tool_description" text;--> statement-breakpoint
ALTER TABLE "steps" ADD COLUMN "purpose" text DEFAULT 'CALL' NOT NULL;--> statement-breakpoint
ALTER TABLE "steps" ADD COLUMN "reconciled" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "external_tasks" ADD COLUMN "leased_at" timestamp with time zone;