CREATE TABLE "voice_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"agent_id" text,
	"call_sid" text NOT NULL,
	"session_id" text NOT NULL,
	"from_number" text,
	"to_number" text,
	"direction" text,
	"started_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	"transcript" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"handoff" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "voice_sessions" ADD CONSTRAINT "voice_sessions_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "voice_sessions" ADD CONSTRAINT "voice_sessions_agent_id_voice_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."voice_agents"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "voice_sessions_session_idx" ON "voice_sessions" USING btree ("org_id","session_id");--> statement-breakpoint
CREATE INDEX "voice_sessions_call_idx" ON "voice_sessions" USING btree ("org_id","call_sid");--> statement-breakpoint
CREATE INDEX "voice_sessions_started_idx" ON "voice_sessions" USING btree ("org_id","started_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "voice_sessions_agent_idx" ON "voice_sessions" USING btree ("agent_id");--> statement-breakpoint
-- hand-written below
ALTER TABLE voice_sessions ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON voice_sessions
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON voice_sessions TO crm_app;
