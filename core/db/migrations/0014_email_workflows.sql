CREATE TABLE "connected_accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"user_id" text NOT NULL,
	"email" text NOT NULL,
	"display_name" text,
	"smtp_host" text NOT NULL,
	"smtp_port" integer NOT NULL,
	"smtp_secure" boolean NOT NULL,
	"smtp_username" text NOT NULL,
	"smtp_password" text NOT NULL,
	"status" text DEFAULT 'unverified' NOT NULL,
	"status_reason" text,
	"status_code" text,
	"verified_at" timestamp with time zone,
	"last_checked_at" timestamp with time zone,
	"inbound_token_hash" text NOT NULL,
	"inbound_token" text NOT NULL,
	"inbound_signing_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "inbound_emails" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"connected_account_id" text,
	"message_id" text NOT NULL,
	"in_reply_to" text,
	"from_address" text NOT NULL,
	"to_address" text NOT NULL,
	"subject" text NOT NULL,
	"lead_id" text,
	"contact_id" text,
	"activity_id" text,
	"replies_to_email_id" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "scheduled_emails" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"user_id" text NOT NULL,
	"connected_account_id" text,
	"lead_id" text NOT NULL,
	"contact_id" text,
	"to_address" text NOT NULL,
	"cc" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"bcc" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"subject" text NOT NULL,
	"body_html" text NOT NULL,
	"body_text" text,
	"template_id" text,
	"attachments" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"scheduled_at" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'scheduled' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"last_error" text,
	"message_id" text,
	"sent_at" timestamp with time zone,
	"cancelled_at" timestamp with time zone,
	"activity_id" text,
	"follow_up" jsonb,
	"follow_up_due_at" timestamp with time zone,
	"follow_up_status" text,
	"follow_up_task_id" text,
	"enroll_in_workflow_id" text,
	"enrollment_id" text,
	"workflow_enrollment_id" text,
	"workflow_step" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflow_enrollments" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"workflow_id" text NOT NULL,
	"lead_id" text NOT NULL,
	"contact_id" text,
	"enrolled_by" text NOT NULL,
	"connected_account_id" text,
	"status" text DEFAULT 'active' NOT NULL,
	"current_step" integer DEFAULT 0 NOT NULL,
	"next_run_at" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"stop_reason" text,
	"last_error" text,
	"source_email_id" text,
	"completed_at" timestamp with time zone,
	"stopped_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflow_step_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"enrollment_id" text NOT NULL,
	"step_index" integer NOT NULL,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"result" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"ran_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflows" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"owner_id" text,
	"name" text NOT NULL,
	"description" text,
	"status" text DEFAULT 'paused' NOT NULL,
	"steps" jsonb NOT NULL,
	"created_by" text,
	"deleted_at" timestamp with time zone,
	"deleted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "connected_accounts" ADD CONSTRAINT "connected_accounts_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "connected_accounts" ADD CONSTRAINT "connected_accounts_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inbound_emails" ADD CONSTRAINT "inbound_emails_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inbound_emails" ADD CONSTRAINT "inbound_emails_connected_account_id_connected_accounts_id_fk" FOREIGN KEY ("connected_account_id") REFERENCES "public"."connected_accounts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inbound_emails" ADD CONSTRAINT "inbound_emails_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inbound_emails" ADD CONSTRAINT "inbound_emails_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scheduled_emails" ADD CONSTRAINT "scheduled_emails_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scheduled_emails" ADD CONSTRAINT "scheduled_emails_connected_account_id_connected_accounts_id_fk" FOREIGN KEY ("connected_account_id") REFERENCES "public"."connected_accounts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scheduled_emails" ADD CONSTRAINT "scheduled_emails_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scheduled_emails" ADD CONSTRAINT "scheduled_emails_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_enrollments" ADD CONSTRAINT "workflow_enrollments_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_enrollments" ADD CONSTRAINT "workflow_enrollments_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_enrollments" ADD CONSTRAINT "workflow_enrollments_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_enrollments" ADD CONSTRAINT "workflow_enrollments_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_enrollments" ADD CONSTRAINT "workflow_enrollments_connected_account_id_connected_accounts_id_fk" FOREIGN KEY ("connected_account_id") REFERENCES "public"."connected_accounts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_step_runs" ADD CONSTRAINT "workflow_step_runs_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_step_runs" ADD CONSTRAINT "workflow_step_runs_enrollment_id_workflow_enrollments_id_fk" FOREIGN KEY ("enrollment_id") REFERENCES "public"."workflow_enrollments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflows" ADD CONSTRAINT "workflows_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "connected_accounts_inbound_token_idx" ON "connected_accounts" USING btree ("inbound_token_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "connected_accounts_user_email_idx" ON "connected_accounts" USING btree ("org_id","user_id",lower("email"));--> statement-breakpoint
CREATE INDEX "connected_accounts_org_created_idx" ON "connected_accounts" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "connected_accounts_user_idx" ON "connected_accounts" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "inbound_emails_message_idx" ON "inbound_emails" USING btree ("org_id","message_id");--> statement-breakpoint
CREATE INDEX "inbound_emails_lead_idx" ON "inbound_emails" USING btree ("lead_id");--> statement-breakpoint
CREATE INDEX "inbound_emails_account_idx" ON "inbound_emails" USING btree ("connected_account_id");--> statement-breakpoint
CREATE INDEX "inbound_emails_contact_idx" ON "inbound_emails" USING btree ("contact_id");--> statement-breakpoint
CREATE INDEX "scheduled_emails_due_idx" ON "scheduled_emails" USING btree ("next_attempt_at") WHERE "scheduled_emails"."status" in ('scheduled', 'sending');--> statement-breakpoint
CREATE INDEX "scheduled_emails_org_created_idx" ON "scheduled_emails" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "scheduled_emails_message_idx" ON "scheduled_emails" USING btree ("org_id","message_id");--> statement-breakpoint
CREATE INDEX "scheduled_emails_follow_up_idx" ON "scheduled_emails" USING btree ("follow_up_due_at") WHERE "scheduled_emails"."follow_up_status" = 'pending';--> statement-breakpoint
CREATE INDEX "scheduled_emails_lead_idx" ON "scheduled_emails" USING btree ("lead_id");--> statement-breakpoint
CREATE INDEX "scheduled_emails_account_idx" ON "scheduled_emails" USING btree ("connected_account_id");--> statement-breakpoint
CREATE INDEX "scheduled_emails_contact_idx" ON "scheduled_emails" USING btree ("contact_id");--> statement-breakpoint
CREATE INDEX "scheduled_emails_enrollment_idx" ON "scheduled_emails" USING btree ("workflow_enrollment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_enrollments_active_idx" ON "workflow_enrollments" USING btree ("org_id","workflow_id","lead_id") WHERE "workflow_enrollments"."status" = 'active';--> statement-breakpoint
CREATE INDEX "workflow_enrollments_due_idx" ON "workflow_enrollments" USING btree ("next_run_at") WHERE "workflow_enrollments"."status" = 'active';--> statement-breakpoint
CREATE INDEX "workflow_enrollments_workflow_idx" ON "workflow_enrollments" USING btree ("workflow_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "workflow_enrollments_lead_idx" ON "workflow_enrollments" USING btree ("lead_id");--> statement-breakpoint
CREATE INDEX "workflow_enrollments_contact_idx" ON "workflow_enrollments" USING btree ("contact_id");--> statement-breakpoint
CREATE INDEX "workflow_enrollments_account_idx" ON "workflow_enrollments" USING btree ("connected_account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_step_runs_step_idx" ON "workflow_step_runs" USING btree ("enrollment_id","step_index");--> statement-breakpoint
CREATE INDEX "workflows_live_created_idx" ON "workflows" USING btree ("org_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "workflows"."deleted_at" is null;--> statement-breakpoint
ALTER TABLE connected_accounts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON connected_accounts
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON connected_accounts TO crm_app;
--> statement-breakpoint
ALTER TABLE inbound_emails ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON inbound_emails
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON inbound_emails TO crm_app;
--> statement-breakpoint
ALTER TABLE scheduled_emails ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON scheduled_emails
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON scheduled_emails TO crm_app;
--> statement-breakpoint
ALTER TABLE workflows ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON workflows
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON workflows TO crm_app;
--> statement-breakpoint
ALTER TABLE workflow_enrollments ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON workflow_enrollments
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON workflow_enrollments TO crm_app;
--> statement-breakpoint
ALTER TABLE workflow_step_runs ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON workflow_step_runs
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON workflow_step_runs TO crm_app;
