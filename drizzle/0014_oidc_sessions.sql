-- People sign in with the organisation's OpenID Provider (SPEC §12): a principal matched by issuer +
-- subject (its groups are the provider's), and server-side dashboard sessions. A session row keeps only
-- the hash of the cookie's secret; the provider's tokens are sealed with the engine's key.
CREATE TABLE "sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"secret_hash" text NOT NULL,
	"csrf_token" text NOT NULL,
	"principal_id" uuid NOT NULL,
	"provider_tokens" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"refreshed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	"end_reason" text
);
--> statement-breakpoint
ALTER TABLE "principals" ADD COLUMN "oidc_issuer" text;--> statement-breakpoint
ALTER TABLE "principals" ADD COLUMN "oidc_subject" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_principal_id_principals_id_fk" FOREIGN KEY ("principal_id") REFERENCES "public"."principals"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_secret_hash_uq" ON "sessions" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "sessions_principal_idx" ON "sessions" USING btree ("principal_id");--> statement-breakpoint
CREATE UNIQUE INDEX "principals_oidc_uq" ON "principals" USING btree ("oidc_issuer","oidc_subject") WHERE "principals"."oidc_issuer" is not null;
