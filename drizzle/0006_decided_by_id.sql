-- One name per concept: approvals.decided_by held the deciding principal's id while the API's
-- `decidedBy` is a name (decided_by_name). The column is named for what it holds.
ALTER TABLE "approvals" RENAME COLUMN "decided_by" TO "decided_by_id";
