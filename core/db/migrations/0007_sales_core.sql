CREATE TABLE "activities" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"lead_id" text NOT NULL,
	"contact_id" text,
	"type" text NOT NULL,
	"custom_activity_type_id" text,
	"user_id" text,
	"occurred_at" timestamp with time zone DEFAULT now() NOT NULL,
	"fields" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_by" text,
	"deleted_at" timestamp with time zone,
	"deleted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "contacts" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"lead_id" text NOT NULL,
	"name" text NOT NULL,
	"title" text,
	"emails" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"phones" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"custom" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_by" text,
	"deleted_at" timestamp with time zone,
	"deleted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', coalesce(name, '') || ' ' || coalesce(title, '') || ' ' || jsonb_path_query_array(emails, '$[*].email')::text || ' ' || jsonb_path_query_array(phones, '$[*].phone')::text)) STORED
);
--> statement-breakpoint
CREATE TABLE "conversation_memories" (
	"lead_id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"summary" text,
	"commitments" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "custom_activity_types" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"fields" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "custom_object_records" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"object_id" text NOT NULL,
	"values" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"owner_id" text,
	"created_by" text,
	"deleted_at" timestamp with time zone,
	"deleted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "custom_objects" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"fields" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "opportunities" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"lead_id" text NOT NULL,
	"contact_id" text,
	"note" text,
	"value" numeric(18, 2) DEFAULT 0 NOT NULL,
	"currency" text DEFAULT 'USD' NOT NULL,
	"confidence" integer DEFAULT 0 NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"pipeline_stage" text,
	"expected_close_date" date,
	"owner_id" text,
	"closed_at" timestamp with time zone,
	"created_by" text,
	"deleted_at" timestamp with time zone,
	"deleted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', coalesce(note, '') || ' ' || coalesce(pipeline_stage, '') || ' ' || coalesce(status, ''))) STORED
);
--> statement-breakpoint
CREATE TABLE "smart_views" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"scope" text DEFAULT 'leads' NOT NULL,
	"query" jsonb NOT NULL,
	"sort" jsonb,
	"display_columns" text[] DEFAULT '{}'::text[] NOT NULL,
	"visibility" text DEFAULT 'private' NOT NULL,
	"owner_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"lead_id" text,
	"assigned_to" text,
	"text" text NOT NULL,
	"due_at" timestamp with time zone,
	"is_complete" boolean DEFAULT false NOT NULL,
	"completed_at" timestamp with time zone,
	"completed_by" text,
	"snoozed_until" timestamp with time zone,
	"created_by" text,
	"deleted_at" timestamp with time zone,
	"deleted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "activities" ADD CONSTRAINT "activities_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "activities" ADD CONSTRAINT "activities_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "activities" ADD CONSTRAINT "activities_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "activities" ADD CONSTRAINT "activities_custom_activity_type_id_custom_activity_types_id_fk" FOREIGN KEY ("custom_activity_type_id") REFERENCES "public"."custom_activity_types"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversation_memories" ADD CONSTRAINT "conversation_memories_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversation_memories" ADD CONSTRAINT "conversation_memories_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custom_activity_types" ADD CONSTRAINT "custom_activity_types_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custom_object_records" ADD CONSTRAINT "custom_object_records_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custom_object_records" ADD CONSTRAINT "custom_object_records_object_id_custom_objects_id_fk" FOREIGN KEY ("object_id") REFERENCES "public"."custom_objects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "custom_objects" ADD CONSTRAINT "custom_objects_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "opportunities" ADD CONSTRAINT "opportunities_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "opportunities" ADD CONSTRAINT "opportunities_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "opportunities" ADD CONSTRAINT "opportunities_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "smart_views" ADD CONSTRAINT "smart_views_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "activities_timeline_idx" ON "activities" USING btree ("org_id","lead_id","occurred_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "activities"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "activities_live_created_idx" ON "activities" USING btree ("org_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "activities"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "activities_type_lead_idx" ON "activities" USING btree ("org_id","type","lead_id") WHERE "activities"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "activities_custom_type_idx" ON "activities" USING btree ("org_id","custom_activity_type_id");--> statement-breakpoint
CREATE INDEX "activities_lead_idx" ON "activities" USING btree ("lead_id");--> statement-breakpoint
CREATE INDEX "activities_contact_idx" ON "activities" USING btree ("contact_id");--> statement-breakpoint
CREATE INDEX "activities_org_trash_idx" ON "activities" USING btree ("org_id","deleted_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "activities"."deleted_at" is not null;--> statement-breakpoint
CREATE INDEX "contacts_live_created_idx" ON "contacts" USING btree ("org_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "contacts"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "contacts_lead_idx" ON "contacts" USING btree ("lead_id");--> statement-breakpoint
CREATE INDEX "contacts_search_idx" ON "contacts" USING gin ("search");--> statement-breakpoint
CREATE INDEX "contacts_org_trash_idx" ON "contacts" USING btree ("org_id","deleted_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "contacts"."deleted_at" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "custom_activity_types_name_uq" ON "custom_activity_types" USING btree ("org_id",lower("name"));--> statement-breakpoint
CREATE INDEX "custom_object_records_live_idx" ON "custom_object_records" USING btree ("org_id","object_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "custom_object_records"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "custom_object_records_owner_idx" ON "custom_object_records" USING btree ("org_id","owner_id");--> statement-breakpoint
CREATE INDEX "custom_object_records_org_trash_idx" ON "custom_object_records" USING btree ("org_id","deleted_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "custom_object_records"."deleted_at" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "custom_objects_name_uq" ON "custom_objects" USING btree ("org_id",lower("name"));--> statement-breakpoint
CREATE INDEX "opportunities_live_created_idx" ON "opportunities" USING btree ("org_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "opportunities"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "opportunities_lead_idx" ON "opportunities" USING btree ("lead_id");--> statement-breakpoint
CREATE INDEX "opportunities_contact_idx" ON "opportunities" USING btree ("contact_id");--> statement-breakpoint
CREATE INDEX "opportunities_owner_idx" ON "opportunities" USING btree ("org_id","owner_id");--> statement-breakpoint
CREATE INDEX "opportunities_search_idx" ON "opportunities" USING gin ("search");--> statement-breakpoint
CREATE INDEX "opportunities_org_trash_idx" ON "opportunities" USING btree ("org_id","deleted_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "opportunities"."deleted_at" is not null;--> statement-breakpoint
CREATE INDEX "smart_views_org_idx" ON "smart_views" USING btree ("org_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "tasks_live_created_idx" ON "tasks" USING btree ("org_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "tasks"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "tasks_assignee_open_idx" ON "tasks" USING btree ("org_id","assigned_to","due_at") WHERE "tasks"."deleted_at" is null and "tasks"."is_complete" = false;--> statement-breakpoint
CREATE INDEX "tasks_lead_idx" ON "tasks" USING btree ("lead_id");--> statement-breakpoint
CREATE INDEX "tasks_org_trash_idx" ON "tasks" USING btree ("org_id","deleted_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "tasks"."deleted_at" is not null;--> statement-breakpoint
CREATE INDEX "leads_live_status_idx" ON "leads" USING btree ("org_id","status") WHERE "leads"."deleted_at" is null;
--> statement-breakpoint
-- Tenancy for the sales-core tables, as in 0001_tenancy.sql.
ALTER TABLE contacts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON contacts
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON contacts TO crm_app;
--> statement-breakpoint
ALTER TABLE opportunities ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON opportunities
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON opportunities TO crm_app;
--> statement-breakpoint
ALTER TABLE custom_activity_types ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON custom_activity_types
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON custom_activity_types TO crm_app;
--> statement-breakpoint
ALTER TABLE activities ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON activities
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON activities TO crm_app;
--> statement-breakpoint
ALTER TABLE tasks ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON tasks
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON tasks TO crm_app;
--> statement-breakpoint
ALTER TABLE smart_views ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON smart_views
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON smart_views TO crm_app;
--> statement-breakpoint
ALTER TABLE custom_objects ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON custom_objects
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON custom_objects TO crm_app;
--> statement-breakpoint
ALTER TABLE custom_object_records ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON custom_object_records
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON custom_object_records TO crm_app;
--> statement-breakpoint
ALTER TABLE conversation_memories ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON conversation_memories
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON conversation_memories TO crm_app;
--> statement-breakpoint
-- Full-text search under row-level security. Requests run as crm_app, and PostgreSQL evaluates a
-- qual before the tenancy policy (and so through an index) only when its function is LEAKPROOF;
-- `@@` (ts_match_vq) is not marked so, which made every search scan whole tables. It is a pure
-- boolean of its two arguments, raising nothing about the row it reads, so marking it leaks
-- nothing. Only a superuser may; elsewhere (managed PostgreSQL) searches stay correct, just slower.
DO $$
BEGIN
  ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'ts_match_vq left as is: marking it LEAKPROOF needs a superuser';
END
$$;
