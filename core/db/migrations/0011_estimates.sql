CREATE TABLE "estimate_counters" (
	"org_id" text PRIMARY KEY NOT NULL,
	"last_number" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "estimates" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"lead_id" text NOT NULL,
	"contact_id" text,
	"opportunity_id" text,
	"number" text NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"currency" text NOT NULL,
	"issue_date" date,
	"valid_until" date,
	"notes" text,
	"line_items" jsonb NOT NULL,
	"subtotal_minor" bigint NOT NULL,
	"tax_total_minor" bigint NOT NULL,
	"total_minor" bigint NOT NULL,
	"send_count" integer DEFAULT 0 NOT NULL,
	"sent_at" timestamp with time zone,
	"accepted_at" timestamp with time zone,
	"declined_at" timestamp with time zone,
	"decline_reason" text,
	"expired_at" timestamp with time zone,
	"invoice_id" text,
	"created_by" text,
	"deleted_at" timestamp with time zone,
	"deleted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', coalesce(number, '') || ' ' || coalesce(notes, ''))) STORED
);
--> statement-breakpoint
ALTER TABLE "estimate_counters" ADD CONSTRAINT "estimate_counters_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_opportunity_id_opportunities_id_fk" FOREIGN KEY ("opportunity_id") REFERENCES "public"."opportunities"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_invoice_id_invoices_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoices"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "estimates_live_created_idx" ON "estimates" USING btree ("org_id","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "estimates"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "estimates_lead_idx" ON "estimates" USING btree ("lead_id");--> statement-breakpoint
CREATE INDEX "estimates_contact_idx" ON "estimates" USING btree ("contact_id");--> statement-breakpoint
CREATE INDEX "estimates_opportunity_idx" ON "estimates" USING btree ("opportunity_id");--> statement-breakpoint
CREATE INDEX "estimates_invoice_idx" ON "estimates" USING btree ("invoice_id");--> statement-breakpoint
CREATE INDEX "estimates_expiry_idx" ON "estimates" USING btree ("valid_until") WHERE "estimates"."status" in ('draft', 'sent');--> statement-breakpoint
CREATE UNIQUE INDEX "estimates_org_number_idx" ON "estimates" USING btree ("org_id","number");--> statement-breakpoint
CREATE INDEX "estimates_search_idx" ON "estimates" USING gin ("search");--> statement-breakpoint
ALTER TABLE estimates ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON estimates
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON estimates TO crm_app;
--> statement-breakpoint
ALTER TABLE estimate_counters ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON estimate_counters
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON estimate_counters TO crm_app;
