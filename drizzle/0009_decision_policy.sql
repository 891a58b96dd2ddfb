-- Each decision records the policy it was made under (SPEC §11): the definition version the instance
-- runs, the approval rule whose levels applied (its `when`, or null for the tool's approvers) and the
-- person's groups at that moment. The approval keeps the rule and version it was opened under.
ALTER TABLE "approvals" ADD COLUMN "rule" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "definition_version" integer;--> statement-breakpoint
ALTER TABLE "approval_decisions" ADD COLUMN "definition_version" integer;--> statement-breakpoint
ALTER TABLE "approval_decisions" ADD COLUMN "rule" text;--> statement-breakpoint
ALTER TABLE "approval_decisions" ADD COLUMN "groups" text[];
