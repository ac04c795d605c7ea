CREATE TABLE "survey_responses" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"survey_id" text NOT NULL,
	"answers" jsonb NOT NULL,
	"email" text,
	"email_key" text,
	"lead_id" text,
	"contact_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "surveys" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"questions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"thank_you_message" text,
	"one_response_per_email" boolean DEFAULT false NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"public_token_hash" text,
	"public_token_sealed" text,
	"view_count" integer DEFAULT 0 NOT NULL,
	"activated_at" timestamp with time zone,
	"closed_at" timestamp with time zone,
	"created_by" text,
	"deleted_at" timestamp with time zone,
	"deleted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "survey_responses" ADD CONSTRAINT "survey_responses_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "survey_responses" ADD CONSTRAINT "survey_responses_survey_id_surveys_id_fk" FOREIGN KEY ("survey_id") REFERENCES "public"."surveys"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "surveys" ADD CONSTRAINT "surveys_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "survey_responses_survey_created_idx" ON "survey_responses" USING btree ("org_id","survey_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "survey_responses_one_per_email_idx" ON "survey_responses" USING btree ("survey_id","email_key") WHERE "survey_responses"."email_key" is not null;--> statement-breakpoint
CREATE INDEX "surveys_live_created_idx" ON "surveys" USING btree ("org_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "surveys"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "surveys_org_trash_idx" ON "surveys" USING btree ("org_id","deleted_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "surveys"."deleted_at" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "surveys_public_token_idx" ON "surveys" USING btree ("public_token_hash");--> statement-breakpoint
-- hand-written below
ALTER TABLE surveys ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON surveys
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON surveys TO crm_app;
--> statement-breakpoint
ALTER TABLE survey_responses ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON survey_responses
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON survey_responses TO crm_app;
