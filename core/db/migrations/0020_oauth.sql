CREATE TABLE "oauth_clients" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text,
	"client_id" text NOT NULL,
	"source" text NOT NULL,
	"name" text NOT NULL,
	"redirect_uris" text[] NOT NULL,
	"scopes" text[],
	"secret_hash" text,
	"logo_uri" text,
	"client_uri" text,
	"created_by" text,
	"registered_ip" text,
	"last_used_at" timestamp with time zone,
	"metadata_expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oauth_codes" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"code_hash" text NOT NULL,
	"installation_id" text NOT NULL,
	"client_ref" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"code_challenge" text NOT NULL,
	"resource" text NOT NULL,
	"scopes" text[] NOT NULL,
	"toolsets" text[] NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oauth_installations" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"user_id" text NOT NULL,
	"client_ref" text NOT NULL,
	"scopes" text[] NOT NULL,
	"toolsets" text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oauth_pending_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"handle_hash" text NOT NULL,
	"csrf_hash" text NOT NULL,
	"client_ref" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"state" text,
	"code_challenge" text NOT NULL,
	"resource" text NOT NULL,
	"scopes" text[] NOT NULL,
	"user_id" text,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oauth_refresh_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"family_id" text NOT NULL,
	"installation_id" text NOT NULL,
	"client_ref" text NOT NULL,
	"resource" text NOT NULL,
	"scopes" text[] NOT NULL,
	"toolsets" text[] NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"rotated_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "invoices" DROP CONSTRAINT "invoices_project_id_projects_id_fk";
--> statement-breakpoint
ALTER TABLE "oauth_tokens" ADD COLUMN "resource" text;--> statement-breakpoint
ALTER TABLE "oauth_tokens" ADD COLUMN "toolsets" text[];--> statement-breakpoint
ALTER TABLE "oauth_tokens" ADD COLUMN "installation_id" text;--> statement-breakpoint
ALTER TABLE "oauth_tokens" ADD COLUMN "family_id" text;--> statement-breakpoint
ALTER TABLE "oauth_clients" ADD CONSTRAINT "oauth_clients_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_codes" ADD CONSTRAINT "oauth_codes_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_codes" ADD CONSTRAINT "oauth_codes_installation_id_oauth_installations_id_fk" FOREIGN KEY ("installation_id") REFERENCES "public"."oauth_installations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_codes" ADD CONSTRAINT "oauth_codes_client_ref_oauth_clients_id_fk" FOREIGN KEY ("client_ref") REFERENCES "public"."oauth_clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_installations" ADD CONSTRAINT "oauth_installations_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_installations" ADD CONSTRAINT "oauth_installations_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_installations" ADD CONSTRAINT "oauth_installations_client_ref_oauth_clients_id_fk" FOREIGN KEY ("client_ref") REFERENCES "public"."oauth_clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_pending_requests" ADD CONSTRAINT "oauth_pending_requests_client_ref_oauth_clients_id_fk" FOREIGN KEY ("client_ref") REFERENCES "public"."oauth_clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_pending_requests" ADD CONSTRAINT "oauth_pending_requests_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_refresh_tokens" ADD CONSTRAINT "oauth_refresh_tokens_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_refresh_tokens" ADD CONSTRAINT "oauth_refresh_tokens_installation_id_oauth_installations_id_fk" FOREIGN KEY ("installation_id") REFERENCES "public"."oauth_installations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_refresh_tokens" ADD CONSTRAINT "oauth_refresh_tokens_client_ref_oauth_clients_id_fk" FOREIGN KEY ("client_ref") REFERENCES "public"."oauth_clients"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "oauth_clients_client_id_uq" ON "oauth_clients" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "oauth_clients_org_idx" ON "oauth_clients" USING btree ("org_id");--> statement-breakpoint
CREATE UNIQUE INDEX "oauth_codes_hash_uq" ON "oauth_codes" USING btree ("code_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "oauth_installations_client_user_uq" ON "oauth_installations" USING btree ("client_ref","user_id");--> statement-breakpoint
CREATE INDEX "oauth_installations_org_idx" ON "oauth_installations" USING btree ("org_id");--> statement-breakpoint
CREATE UNIQUE INDEX "oauth_pending_handle_uq" ON "oauth_pending_requests" USING btree ("handle_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "oauth_refresh_hash_uq" ON "oauth_refresh_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "oauth_refresh_family_idx" ON "oauth_refresh_tokens" USING btree ("family_id");--> statement-breakpoint
CREATE INDEX "oauth_refresh_installation_idx" ON "oauth_refresh_tokens" USING btree ("installation_id");--> statement-breakpoint
CREATE INDEX "oauth_tokens_installation_idx" ON "oauth_tokens" USING btree ("installation_id");--> statement-breakpoint
CREATE INDEX "oauth_tokens_family_idx" ON "oauth_tokens" USING btree ("family_id");--> statement-breakpoint
ALTER TABLE oauth_clients ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON oauth_clients
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
-- Dynamic registrations and metadata documents belong to no organization: every tenant may read
-- them (an installation names one), none may change them.
CREATE POLICY shared_clients_read ON oauth_clients FOR SELECT
  USING (org_id IS NULL);
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON oauth_clients TO crm_app;
--> statement-breakpoint
ALTER TABLE oauth_installations ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON oauth_installations
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON oauth_installations TO crm_app;
--> statement-breakpoint
ALTER TABLE oauth_codes ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON oauth_codes
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON oauth_codes TO crm_app;
--> statement-breakpoint
ALTER TABLE oauth_refresh_tokens ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON oauth_refresh_tokens
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON oauth_refresh_tokens TO crm_app;
--> statement-breakpoint
-- The pending requests have no organization until the person signs in; only the system role reads them.
REVOKE ALL ON oauth_pending_requests FROM crm_app;
