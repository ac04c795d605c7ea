CREATE TABLE "telephony_settings" (
	"org_id" text PRIMARY KEY NOT NULL,
	"provider" text DEFAULT 'twilio' NOT NULL,
	"account_sid" text NOT NULL,
	"auth_token" text NOT NULL,
	"auth_token_last4" text NOT NULL,
	"friendly_name" text,
	"verified_at" timestamp with time zone NOT NULL,
	"updated_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "telephony_settings" ADD CONSTRAINT "telephony_settings_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "telephony_settings_account_sid_idx" ON "telephony_settings" USING btree ("account_sid");--> statement-breakpoint
-- hand-written below
ALTER TABLE telephony_settings ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON telephony_settings
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON telephony_settings TO crm_app;
