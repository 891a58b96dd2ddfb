-- Deferrals on the task's current attempt (SPEC §15.3): deferTask hands a lease back without spending an
-- attempt; past ABADA_MAX_DEFERRALS on one attempt, the next deferral counts as one failure. A deferred
-- task waits in available_at, which the claim already filters on, so the claim is unchanged.
ALTER TABLE "external_tasks" ADD COLUMN "deferrals" integer DEFAULT 0 NOT NULL;
