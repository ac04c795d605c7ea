CREATE TABLE "messages" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"channel" text NOT NULL,
	"direction" text NOT NULL,
	"lead_id" text,
	"phone_number_id" text,
	"from_address" text NOT NULL,
	"to_address" text NOT NULL,
	"body" text,
	"template_sid" text,
	"template_variables" jsonb,
	"sid" text,
	"status" text NOT NULL,
	"error_code" text,
	"error_message" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"user_id" text,
	"activity_id" text,
	"created_by" text,
	"deleted_at" timestamp with time zone,
	"deleted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "messages_live_created_idx" ON "messages" USING btree ("org_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "messages"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "messages_lead_idx" ON "messages" USING btree ("org_id","lead_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "messages_sid_idx" ON "messages" USING btree ("org_id","sid") WHERE "messages"."sid" is not null;--> statement-breakpoint
CREATE INDEX "messages_inbound_from_idx" ON "messages" USING btree ("org_id","channel","direction","from_address","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "messages_due_idx" ON "messages" USING btree ("next_attempt_at") WHERE "messages"."status" in ('queued', 'sending');--> statement-breakpoint
-- hand-written below
ALTER TABLE messages ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON messages
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON messages TO crm_app;
