-- The request id of the fetchAndLock that took the current lease (SPEC §3, issue 14). A worker whose
-- fetch got no answer (the database restarted, the connection dropped) sends the same request again with
-- the same id and gets the same claim back, instead of leaving those leases to expire and count toward
-- ABADA_MAX_LEASE_EXPIRIES. Read only among LEASED rows of one worker, so no index of its own.
ALTER TABLE "external_tasks" ADD COLUMN "lease_request_id" text;
