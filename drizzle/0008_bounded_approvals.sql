-- Bounded approvals (SPEC §11): an approval that expires or whose deciders' authority lapsed gives way to
-- a new version of the same call, so a step may have several approvals over time — but at most one that
-- is not EXPIRED or VOIDED. `expires_at` is the pending timeout (approval_timeout_hours), set at proposal
-- so the sweep reads one indexed column; `void_reason` says why an approval was voided.
ALTER TABLE "approvals" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "void_reason" text;--> statement-breakpoint
DROP INDEX "approvals_step_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "approvals_step_uq" ON "approvals" USING btree ("task_id","attempt","sequence") WHERE state NOT IN ('EXPIRED', 'VOIDED');--> statement-breakpoint
CREATE INDEX "approvals_expiry_idx" ON "approvals" USING btree ("expires_at") WHERE state = 'PENDING';
