CREATE TABLE "document_counters" (
	"org_id" text NOT NULL,
	"kind" text NOT NULL,
	"last_number" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "document_counters_org_id_kind_pk" PRIMARY KEY("org_id","kind")
);
--> statement-breakpoint
ALTER TABLE "document_counters" ADD CONSTRAINT "document_counters_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
INSERT INTO "document_counters" ("org_id", "kind", "last_number")
  SELECT "org_id", 'invoice', "last_number" FROM "invoice_counters";
--> statement-breakpoint
INSERT INTO "document_counters" ("org_id", "kind", "last_number")
  SELECT "org_id", 'estimate', "last_number" FROM "estimate_counters";
--> statement-breakpoint
DROP TABLE "invoice_counters";
--> statement-breakpoint
DROP TABLE "estimate_counters";
--> statement-breakpoint
ALTER TABLE document_counters ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON document_counters
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON document_counters TO crm_app;
