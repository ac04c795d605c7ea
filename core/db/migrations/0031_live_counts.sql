CREATE TABLE "live_counts" (
	"org_id" text NOT NULL,
	"kind" text NOT NULL,
	"key" text DEFAULT '' NOT NULL,
	"delta" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "live_counts" ADD CONSTRAINT "live_counts_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "live_counts_org_kind_key_idx" ON "live_counts" USING btree ("org_id","kind","key","delta");
--> statement-breakpoint
-- hand-written below
-- (drizzle's DROP TABLE "lead_counts" moved to the end: its totals are copied over first.)
ALTER TABLE live_counts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON live_counts
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON live_counts TO crm_app;
--> statement-breakpoint
-- The ledger's writer (core/live-counts.ts, docs/decisions.md "Exact counts without a hot row"). One
-- statement-level trigger per event (transition tables allow one event each) inserts one delta row
-- per (organization, key) the statement changed, in the writer's transaction: no row is ever updated,
-- so concurrent writers of one organization never wait for each other, and a rollback takes its
-- deltas with it. Arguments: the kind, then the bucket column (absent: one total, key ''). A counted
-- table has `org_id` and `deleted_at` (live rows: deleted_at is null).
CREATE FUNCTION live_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  counted_kind text := TG_ARGV[0];
  key_of text := CASE WHEN TG_NARGS > 1 THEN format('coalesce(%I::text, '''')', TG_ARGV[1]) ELSE '''''' END;
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE format(
      'INSERT INTO live_counts (org_id, kind, key, delta)
         SELECT org_id, %L, %s, count(*) FROM new_rows WHERE deleted_at IS NULL GROUP BY 1, 3',
      counted_kind, key_of);
  ELSIF TG_OP = 'DELETE' THEN
    -- Rows removed with their organization (the cascade) leave nothing to count.
    EXECUTE format(
      'INSERT INTO live_counts (org_id, kind, key, delta)
         SELECT org_id, %L, %s, -count(*) FROM old_rows
         WHERE deleted_at IS NULL AND EXISTS (SELECT 1 FROM organizations o WHERE o.id = old_rows.org_id)
         GROUP BY 1, 3',
      counted_kind, key_of);
  ELSE
    -- +1 for each live row after, -1 for each live row before, netted per (organization, key): a
    -- change of neither liveness nor key writes nothing.
    EXECUTE format(
      'INSERT INTO live_counts (org_id, kind, key, delta)
         SELECT org_id, %L, key, sum(delta) FROM (
           SELECT org_id, %s AS key, 1 AS delta FROM new_rows WHERE deleted_at IS NULL
           UNION ALL
           SELECT org_id, %s, -1 FROM old_rows WHERE deleted_at IS NULL
         ) changes
         GROUP BY org_id, key HAVING sum(delta) <> 0',
      counted_kind, key_of, key_of);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- Counts a table in the ledger: its three triggers, and (unless `backfill` is false) its live rows as
-- they are now. Creating the triggers locks the table against writes until the migration commits,
-- so the backfill and the triggers meet exactly. A later migration counts another table with
-- `SELECT live_counts_attach('estimates', 'estimates', 'status');`.
CREATE FUNCTION live_counts_attach(counted regclass, counted_kind text, key_column text DEFAULT NULL,
  backfill boolean DEFAULT true) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  args text := CASE WHEN key_column IS NULL THEN format('%L', counted_kind)
                    ELSE format('%L, %L', counted_kind, key_column) END;
  key_of text := CASE WHEN key_column IS NULL THEN '''''' ELSE format('coalesce(%I::text, '''')', key_column) END;
BEGIN
  EXECUTE format('CREATE TRIGGER live_counts_insert AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION live_counts_apply(%s)', counted, args);
  EXECUTE format('CREATE TRIGGER live_counts_update AFTER UPDATE ON %s REFERENCING OLD TABLE AS old_rows
    NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION live_counts_apply(%s)', counted, args);
  EXECUTE format('CREATE TRIGGER live_counts_delete AFTER DELETE ON %s REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION live_counts_apply(%s)', counted, args);
  IF backfill THEN
    EXECUTE format('INSERT INTO live_counts (org_id, kind, key, delta)
      SELECT org_id, %L, %s, count(*) FROM %s WHERE deleted_at IS NULL GROUP BY 1, 3',
      counted_kind, key_of, counted);
  END IF;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION live_counts_attach(regclass, text, text, boolean) FROM PUBLIC;
--> statement-breakpoint
-- Leads: the hot counter row of migration 0005 goes; its exact totals carry over as one delta each.
DROP TRIGGER lead_counts_insert ON leads;
--> statement-breakpoint
DROP TRIGGER lead_counts_update ON leads;
--> statement-breakpoint
DROP TRIGGER lead_counts_delete ON leads;
--> statement-breakpoint
DROP FUNCTION lead_counts_apply();
--> statement-breakpoint
SELECT live_counts_attach('leads', 'leads', NULL, false);
--> statement-breakpoint
INSERT INTO live_counts (org_id, kind, key, delta)
  SELECT org_id, 'leads', '', live FROM lead_counts WHERE live <> 0;
--> statement-breakpoint
DROP TABLE "lead_counts" CASCADE;
--> statement-breakpoint
-- Invoices, per status: the unfiltered and the status-filtered list read their totals here.
SELECT live_counts_attach('invoices', 'invoices', 'status');
