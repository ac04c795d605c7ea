CREATE TABLE "proposals" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"lead_id" text NOT NULL,
	"opportunity_id" text,
	"title" text NOT NULL,
	"sections" jsonb NOT NULL,
	"currency" text,
	"line_items" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"subtotal_minor" bigint,
	"tax_total_minor" bigint,
	"total_minor" bigint,
	"status" text DEFAULT 'draft' NOT NULL,
	"valid_until" date,
	"public_token_hash" text,
	"send_count" integer DEFAULT 0 NOT NULL,
	"sent_at" timestamp with time zone,
	"sent_to" text,
	"accepted_at" timestamp with time zone,
	"accepted_by_name" text,
	"accepted_by_email" text,
	"signature" text,
	"declined_at" timestamp with time zone,
	"decline_reason" text,
	"expired_at" timestamp with time zone,
	"created_by" text,
	"deleted_at" timestamp with time zone,
	"deleted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', coalesce(title, ''))) STORED
);
--> statement-breakpoint
ALTER TABLE "proposals" ADD CONSTRAINT "proposals_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proposals" ADD CONSTRAINT "proposals_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "proposals" ADD CONSTRAINT "proposals_opportunity_id_opportunities_id_fk" FOREIGN KEY ("opportunity_id") REFERENCES "public"."opportunities"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "proposals_live_created_idx" ON "proposals" USING btree ("org_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "proposals"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "proposals_lead_idx" ON "proposals" USING btree ("lead_id");--> statement-breakpoint
CREATE INDEX "proposals_opportunity_idx" ON "proposals" USING btree ("opportunity_id");--> statement-breakpoint
CREATE UNIQUE INDEX "proposals_public_token_idx" ON "proposals" USING btree ("public_token_hash");--> statement-breakpoint
CREATE INDEX "proposals_expiry_idx" ON "proposals" USING btree ("valid_until") WHERE "proposals"."status" in ('draft', 'sent');--> statement-breakpoint
CREATE INDEX "proposals_search_idx" ON "proposals" USING gin ("search");--> statement-breakpoint
ALTER TABLE proposals ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON proposals
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON proposals TO crm_app;
