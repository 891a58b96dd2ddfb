CREATE TABLE "approval_decisions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"approval_id" uuid NOT NULL,
	"level" integer NOT NULL,
	"principal_id" uuid NOT NULL,
	"principal_name" text NOT NULL,
	"decision" text NOT NULL,
	"digest" text NOT NULL,
	"edited_digest" text,
	"edited_arguments_enc" text,
	"comment" text,
	"outcome" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "approvals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" text NOT NULL,
	"process_instance_id" uuid NOT NULL,
	"task_id" uuid NOT NULL,
	"attempt" integer NOT NULL,
	"sequence" integer NOT NULL,
	"node_id" text NOT NULL,
	"tool_ref" text NOT NULL,
	"model" text,
	"state" text NOT NULL,
	"digest" text NOT NULL,
	"arguments_enc" text NOT NULL,
	"key_id" text NOT NULL,
	"candidate_groups" text[] NOT NULL,
	"levels" jsonb NOT NULL,
	"current_level" integer DEFAULT 0 NOT NULL,
	"proposal_version" integer DEFAULT 1 NOT NULL,
	"sla_due_at" timestamp with time zone,
	"escalated" boolean DEFAULT false NOT NULL,
	"escalated_at" timestamp with time zone,
	"decided_by" uuid,
	"decided_by_name" text,
	"decided_at" timestamp with time zone,
	"comment" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "credentials" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"secret_enc" text NOT NULL,
	"key_id" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "definitions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" text NOT NULL,
	"key" text NOT NULL,
	"version" integer NOT NULL,
	"spec" jsonb NOT NULL,
	"source" text NOT NULL,
	"source_sha256" text NOT NULL,
	"deployed_by" uuid,
	"deployed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "external_tasks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" text NOT NULL,
	"process_instance_id" uuid NOT NULL,
	"node_id" text NOT NULL,
	"node_type" text NOT NULL,
	"topic_name" text NOT NULL,
	"state" text NOT NULL,
	"priority" integer DEFAULT 0 NOT NULL,
	"attempt" integer DEFAULT 1 NOT NULL,
	"max_attempts" integer DEFAULT 3 NOT NULL,
	"worker_id" text,
	"locked_by" uuid,
	"lock_expires_at" timestamp with time zone,
	"available_at" timestamp with time zone DEFAULT now() NOT NULL,
	"lease_expiries" integer DEFAULT 0 NOT NULL,
	"agent_work" jsonb,
	"metadata" jsonb,
	"error_type" text,
	"error_message" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "history" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"process_instance_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"event_type" text NOT NULL,
	"actor" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"task_id" uuid,
	"attempt" integer,
	"sequence" integer,
	"approval_id" uuid,
	"incident_id" uuid,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "history_heads" (
	"process_instance_id" uuid PRIMARY KEY NOT NULL,
	"seq" integer DEFAULT 0 NOT NULL,
	"hash" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "incidents" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" text,
	"type" text NOT NULL,
	"state" text DEFAULT 'OPEN' NOT NULL,
	"process_instance_id" uuid,
	"task_id" uuid,
	"attempt" integer,
	"sequence" integer,
	"worker_id" text,
	"message" text NOT NULL,
	"resolution" jsonb,
	"resolved_by" uuid,
	"resolved_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"kind" text NOT NULL,
	"dedupe_key" text NOT NULL,
	"payload" jsonb NOT NULL,
	"state" text DEFAULT 'PENDING' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"run_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "model_prices" (
	"model" text NOT NULL,
	"effective_from" timestamp with time zone NOT NULL,
	"input_per_mtok_usd" double precision NOT NULL,
	"output_per_mtok_usd" double precision NOT NULL,
	CONSTRAINT "model_prices_model_effective_from_pk" PRIMARY KEY("model","effective_from")
);
--> statement-breakpoint
CREATE TABLE "principals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" text,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"groups" text[] DEFAULT '{}' NOT NULL,
	"topics" text[] DEFAULT '{}' NOT NULL,
	"token_hash" text NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"disabled_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "process_instances" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" text NOT NULL,
	"definition_id" uuid NOT NULL,
	"key" text NOT NULL,
	"version" integer NOT NULL,
	"state" text NOT NULL,
	"current_node_id" text,
	"variables" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"business_key" text,
	"started_by" uuid,
	"parent_task_id" uuid,
	"parent_sequence" integer,
	"depth" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "steps" (
	"task_id" uuid NOT NULL,
	"attempt" integer NOT NULL,
	"sequence" integer NOT NULL,
	"kind" text NOT NULL,
	"state" text NOT NULL,
	"tool_ref" text,
	"policy" text,
	"model" text,
	"digest" text NOT NULL,
	"request_enc" text NOT NULL,
	"response_enc" text,
	"error_enc" text,
	"key_id" text NOT NULL,
	"idempotency_key" text,
	"comment" text,
	"reused" boolean DEFAULT false NOT NULL,
	"usage" jsonb,
	"cost_usd" double precision,
	"approval_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "steps_task_id_attempt_sequence_pk" PRIMARY KEY("task_id","attempt","sequence")
);
--> statement-breakpoint
CREATE TABLE "task_reports" (
	"task_id" uuid NOT NULL,
	"attempt" integer NOT NULL,
	"operation" text NOT NULL,
	"request_sha256" text NOT NULL,
	"outcome" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "task_reports_task_id_attempt_operation_pk" PRIMARY KEY("task_id","attempt","operation")
);
--> statement-breakpoint
CREATE TABLE "tool_servers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"spec" jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "user_tasks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" text NOT NULL,
	"process_instance_id" uuid NOT NULL,
	"node_id" text NOT NULL,
	"candidate_groups" text[] NOT NULL,
	"state" text NOT NULL,
	"completed_by" uuid,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workers" (
	"principal_id" uuid NOT NULL,
	"worker_id" text NOT NULL,
	"project_id" text,
	"topics" text[] DEFAULT '{}' NOT NULL,
	"models" text[] DEFAULT '{}' NOT NULL,
	"last_heartbeat_at" timestamp with time zone,
	"last_rejection_at" timestamp with time zone,
	"last_rejection_reason" text,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workers_principal_id_worker_id_pk" PRIMARY KEY("principal_id","worker_id")
);
--> statement-breakpoint
ALTER TABLE "approval_decisions" ADD CONSTRAINT "approval_decisions_approval_id_approvals_id_fk" FOREIGN KEY ("approval_id") REFERENCES "public"."approvals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_process_instance_id_process_instances_id_fk" FOREIGN KEY ("process_instance_id") REFERENCES "public"."process_instances"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_task_id_external_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."external_tasks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credentials" ADD CONSTRAINT "credentials_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "definitions" ADD CONSTRAINT "definitions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "external_tasks" ADD CONSTRAINT "external_tasks_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "external_tasks" ADD CONSTRAINT "external_tasks_process_instance_id_process_instances_id_fk" FOREIGN KEY ("process_instance_id") REFERENCES "public"."process_instances"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "incidents" ADD CONSTRAINT "incidents_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "principals" ADD CONSTRAINT "principals_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "process_instances" ADD CONSTRAINT "process_instances_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "process_instances" ADD CONSTRAINT "process_instances_definition_id_definitions_id_fk" FOREIGN KEY ("definition_id") REFERENCES "public"."definitions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "steps" ADD CONSTRAINT "steps_task_id_external_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."external_tasks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_reports" ADD CONSTRAINT "task_reports_task_id_external_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."external_tasks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_servers" ADD CONSTRAINT "tool_servers_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_tasks" ADD CONSTRAINT "user_tasks_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "user_tasks" ADD CONSTRAINT "user_tasks_process_instance_id_process_instances_id_fk" FOREIGN KEY ("process_instance_id") REFERENCES "public"."process_instances"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "approval_decisions_approval_idx" ON "approval_decisions" USING btree ("approval_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "approvals_step_uq" ON "approvals" USING btree ("task_id","attempt","sequence");--> statement-breakpoint
CREATE INDEX "approvals_project_state_idx" ON "approvals" USING btree ("project_id","state","created_at");--> statement-breakpoint
CREATE INDEX "approvals_sla_idx" ON "approvals" USING btree ("sla_due_at") WHERE state = 'PENDING' AND escalated = false;--> statement-breakpoint
CREATE UNIQUE INDEX "credentials_project_name_uq" ON "credentials" USING btree ("project_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "definitions_project_key_version_uq" ON "definitions" USING btree ("project_id","key","version");--> statement-breakpoint
CREATE INDEX "external_tasks_open_idx" ON "external_tasks" USING btree ("topic_name","priority" DESC NULLS LAST,"available_at") WHERE state = 'OPEN';--> statement-breakpoint
CREATE INDEX "external_tasks_leased_idx" ON "external_tasks" USING btree ("lock_expires_at") WHERE state = 'LEASED';--> statement-breakpoint
CREATE INDEX "external_tasks_instance_idx" ON "external_tasks" USING btree ("process_instance_id");--> statement-breakpoint
CREATE UNIQUE INDEX "history_instance_seq_uq" ON "history" USING btree ("process_instance_id","seq");--> statement-breakpoint
CREATE INDEX "incidents_project_state_idx" ON "incidents" USING btree ("project_id","state","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_dedupe_uq" ON "jobs" USING btree ("dedupe_key");--> statement-breakpoint
CREATE INDEX "jobs_pending_idx" ON "jobs" USING btree ("run_at") WHERE state = 'PENDING';--> statement-breakpoint
CREATE UNIQUE INDEX "principals_token_hash_uq" ON "principals" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "process_instances_project_state_idx" ON "process_instances" USING btree ("project_id","state","created_at");--> statement-breakpoint
CREATE INDEX "process_instances_parent_task_idx" ON "process_instances" USING btree ("parent_task_id");--> statement-breakpoint
CREATE UNIQUE INDEX "tool_servers_project_name_uq" ON "tool_servers" USING btree ("project_id","name");--> statement-breakpoint
CREATE INDEX "user_tasks_instance_idx" ON "user_tasks" USING btree ("process_instance_id");