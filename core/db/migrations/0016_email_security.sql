CREATE TABLE "inbound_tokens" (
	"org_id" text NOT NULL,
	"connected_account_id" text NOT NULL,
	"token" text NOT NULL,
	"seen_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "connected_accounts" ADD COLUMN "smtp_require_tls" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "inbound_tokens" ADD CONSTRAINT "inbound_tokens_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inbound_tokens" ADD CONSTRAINT "inbound_tokens_connected_account_id_connected_accounts_id_fk" FOREIGN KEY ("connected_account_id") REFERENCES "public"."connected_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "inbound_tokens_account_token_idx" ON "inbound_tokens" USING btree ("connected_account_id","token");--> statement-breakpoint
CREATE INDEX "inbound_tokens_account_seen_idx" ON "inbound_tokens" USING btree ("connected_account_id","seen_at");--> statement-breakpoint
ALTER TABLE inbound_tokens ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON inbound_tokens
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON inbound_tokens TO crm_app;
