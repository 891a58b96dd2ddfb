-- One name per concept: a worker holds a lease on a task (SPEC §3). The API keeps its fixed words
-- (fetchAndLock, lockExpiresAt); inside the code and the database it is the lease. Indexes follow the
-- renamed columns by themselves.
ALTER TABLE "external_tasks" RENAME COLUMN "locked_by" TO "leased_by";--> statement-breakpoint
ALTER TABLE "external_tasks" RENAME COLUMN "lock_expires_at" TO "lease_expires_at";
