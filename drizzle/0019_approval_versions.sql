ALTER TABLE "approval_decisions" ALTER COLUMN "level" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "approval_decisions" ADD COLUMN "version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "approval_decisions" ADD COLUMN "chained" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "approval_decisions" ADD COLUMN "action" text DEFAULT 'DECIDE' NOT NULL;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "rule_index" integer;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "proposed_arguments_enc" text;--> statement-breakpoint
-- Decisions made before versions were kept: the version each was on, counted from the approval's
-- version and the edits (approvals with changes) made up to and including it.
UPDATE "approval_decisions" d SET "version" = GREATEST(1, a."proposal_version"
  - (SELECT count(*) FROM "approval_decisions" x
      WHERE x."approval_id" = d."approval_id" AND x."outcome" = 'ACCEPTED' AND x."edited_digest" IS NOT NULL)
  + (SELECT count(*) FROM "approval_decisions" x
      WHERE x."approval_id" = d."approval_id" AND x."outcome" = 'ACCEPTED' AND x."edited_digest" IS NOT NULL
        AND (x."created_at", x."id") <= (d."created_at", d."id")))
FROM "approvals" a WHERE a."id" = d."approval_id";
