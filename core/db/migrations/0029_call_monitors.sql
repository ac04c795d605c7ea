CREATE TABLE "call_monitors" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"call_id" text NOT NULL,
	"call_sid" text NOT NULL,
	"participant_call_sid" text NOT NULL,
	"mode" text NOT NULL,
	"supervisor_phone" text NOT NULL,
	"started_by" text,
	"started_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	"ended_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "call_monitors" ADD CONSTRAINT "call_monitors_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_monitors" ADD CONSTRAINT "call_monitors_call_id_calls_id_fk" FOREIGN KEY ("call_id") REFERENCES "public"."calls"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "call_monitors_participant_idx" ON "call_monitors" USING btree ("org_id","participant_call_sid");--> statement-breakpoint
CREATE INDEX "call_monitors_call_idx" ON "call_monitors" USING btree ("call_id","started_at");--> statement-breakpoint
-- hand-written below
ALTER TABLE call_monitors ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON call_monitors
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON call_monitors TO crm_app;
