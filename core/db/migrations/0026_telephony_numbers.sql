CREATE TABLE "phone_numbers" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"number" text NOT NULL,
	"label" text,
	"voice" boolean DEFAULT true NOT NULL,
	"sms" boolean DEFAULT true NOT NULL,
	"whatsapp" boolean DEFAULT false NOT NULL,
	"default_voice_agent_id" text,
	"forward_to" text,
	"owner_id" text,
	"created_by" text,
	"deleted_at" timestamp with time zone,
	"deleted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "voice_agents" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"instructions" text NOT NULL,
	"greeting" text NOT NULL,
	"voice" text NOT NULL,
	"language" text NOT NULL,
	"use_knowledge_base" boolean DEFAULT false NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"created_by" text,
	"deleted_at" timestamp with time zone,
	"deleted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "phone_numbers" ADD CONSTRAINT "phone_numbers_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "phone_numbers" ADD CONSTRAINT "phone_numbers_default_voice_agent_id_voice_agents_id_fk" FOREIGN KEY ("default_voice_agent_id") REFERENCES "public"."voice_agents"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "voice_agents" ADD CONSTRAINT "voice_agents_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "phone_numbers_live_number_idx" ON "phone_numbers" USING btree ("number") WHERE "phone_numbers"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "phone_numbers_live_created_idx" ON "phone_numbers" USING btree ("org_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "phone_numbers"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "phone_numbers_org_trash_idx" ON "phone_numbers" USING btree ("org_id","deleted_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "phone_numbers"."deleted_at" is not null;--> statement-breakpoint
CREATE INDEX "phone_numbers_voice_agent_idx" ON "phone_numbers" USING btree ("default_voice_agent_id") WHERE "phone_numbers"."default_voice_agent_id" is not null;--> statement-breakpoint
CREATE INDEX "voice_agents_live_created_idx" ON "voice_agents" USING btree ("org_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "voice_agents"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "voice_agents_org_trash_idx" ON "voice_agents" USING btree ("org_id","deleted_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "voice_agents"."deleted_at" is not null;--> statement-breakpoint
-- hand-written below
ALTER TABLE voice_agents ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON voice_agents
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON voice_agents TO crm_app;
--> statement-breakpoint
ALTER TABLE phone_numbers ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON phone_numbers
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON phone_numbers TO crm_app;
