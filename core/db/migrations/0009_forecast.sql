CREATE TABLE "forecast_snapshot_days" (
	"org_id" text NOT NULL,
	"snapshot_on" date NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "forecast_snapshot_days_org_id_snapshot_on_pk" PRIMARY KEY("org_id","snapshot_on")
);
--> statement-breakpoint
CREATE TABLE "forecast_snapshots" (
	"org_id" text NOT NULL,
	"snapshot_on" date NOT NULL,
	"currency" text NOT NULL,
	"close_month" text NOT NULL,
	"weighted_minor" bigint NOT NULL,
	"commit_minor" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "forecast_snapshots_org_id_snapshot_on_currency_close_month_pk" PRIMARY KEY("org_id","snapshot_on","currency","close_month")
);
--> statement-breakpoint
ALTER TABLE "forecast_snapshot_days" ADD CONSTRAINT "forecast_snapshot_days_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "forecast_snapshots" ADD CONSTRAINT "forecast_snapshots_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE forecast_snapshots ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON forecast_snapshots
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON forecast_snapshots TO crm_app;
--> statement-breakpoint
ALTER TABLE forecast_snapshot_days ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON forecast_snapshot_days
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON forecast_snapshot_days TO crm_app;
