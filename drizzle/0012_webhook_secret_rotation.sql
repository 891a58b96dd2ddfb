ALTER TABLE "webhook_subscriptions" ADD COLUMN "previous_secret_enc" text;--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD COLUMN "previous_secret_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD COLUMN "disabled_reason" text;
