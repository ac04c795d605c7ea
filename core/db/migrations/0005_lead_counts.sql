CREATE TABLE "lead_counts" (
	"org_id" text PRIMARY KEY NOT NULL,
	"live" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "lead_counts" ADD CONSTRAINT "lead_counts_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE lead_counts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON lead_counts
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON lead_counts TO crm_app;
--> statement-breakpoint
-- One statement-level trigger per event (transition tables allow one event each). Each adds the
-- net change of live rows per organization in a single upsert, so a 1,000-row bulk insert touches
-- the counter once, not 1,000 times.
CREATE FUNCTION lead_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO lead_counts (org_id, live)
      SELECT org_id, count(*) FROM new_rows WHERE deleted_at IS NULL GROUP BY org_id
      ON CONFLICT (org_id) DO UPDATE SET live = lead_counts.live + excluded.live;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO lead_counts (org_id, live)
      SELECT org_id, -count(*) FROM old_rows WHERE deleted_at IS NULL GROUP BY org_id
      ON CONFLICT (org_id) DO UPDATE SET live = lead_counts.live + excluded.live;
  ELSE
    INSERT INTO lead_counts (org_id, live)
      SELECT org_id, sum(delta) FROM (
        SELECT n.org_id, (CASE WHEN n.deleted_at IS NULL THEN 1 ELSE 0 END)
                       - (CASE WHEN o.deleted_at IS NULL THEN 1 ELSE 0 END) AS delta
        FROM new_rows n JOIN old_rows o ON o.id = n.id
      ) changes
      WHERE delta <> 0 GROUP BY org_id
      ON CONFLICT (org_id) DO UPDATE SET live = lead_counts.live + excluded.live;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER lead_counts_insert AFTER INSERT ON leads
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lead_counts_apply();
--> statement-breakpoint
CREATE TRIGGER lead_counts_update AFTER UPDATE ON leads
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lead_counts_apply();
--> statement-breakpoint
CREATE TRIGGER lead_counts_delete AFTER DELETE ON leads
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION lead_counts_apply();
--> statement-breakpoint
INSERT INTO lead_counts (org_id, live)
  SELECT org_id, count(*) FROM leads WHERE deleted_at IS NULL GROUP BY org_id
  ON CONFLICT (org_id) DO UPDATE SET live = excluded.live;
