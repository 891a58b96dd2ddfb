-- A worker principal may sign in with the OpenID Provider's client credentials (SPEC §15.1): the
-- client id its tokens carry. One principal per client id, disabled ones included (disabling is final).
ALTER TABLE "principals" ADD COLUMN "oidc_client_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "principals_oidc_client_uq" ON "principals" USING btree ("oidc_client_id") WHERE "principals"."oidc_client_id" is not null;
