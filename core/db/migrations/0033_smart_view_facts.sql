CREATE TABLE "smart_view_facts" (
	"org_id" text NOT NULL,
	"fact" text collate "C" NOT NULL,
	"lead_id" text NOT NULL,
	"source_id" text NOT NULL,
	CONSTRAINT "smart_view_facts_org_id_fact_lead_id_source_id_pk" PRIMARY KEY("org_id","fact","lead_id","source_id")
);
--> statement-breakpoint
ALTER TABLE "smart_view_facts" ADD CONSTRAINT "smart_view_facts_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- hand-written below
ALTER TABLE smart_view_facts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON smart_view_facts
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON smart_view_facts TO crm_app;
--> statement-breakpoint
-- One equality fact: the scope ('custom', 'activity:call', 'activity:custom:<type id>'), the key with
-- its length (so no key and value pair spells another's) and the value lower-cased as a smart view
-- compares it; past 256 bytes the scope and an md5 of the whole (a btree entry has a size limit, and
-- only equality is asked of it). The triggers below and the compiled view (tools/smart-views/query/
-- compile.ts) both call it, so a stored fact and an asked one are the same text.
CREATE FUNCTION smart_view_fact(scope text, key text, value text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN octet_length(f) <= 256 THEN f ELSE scope || ':#' || md5(f) END
  FROM (SELECT scope || ':' || length(key) || ':' || key || '=' || lower(value) AS f) AS spelled
$$;
--> statement-breakpoint
-- The facts of a jsonb object under a scope: one per string value (other types have no fact, as an
-- equality filter on a string never matches them).
CREATE FUNCTION smart_view_facts_of(scope text, object jsonb) RETURNS SETOF text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT smart_view_fact(scope, e.key, e.value #>> '{}')
  FROM jsonb_each(CASE WHEN jsonb_typeof(object) = 'object' THEN object ELSE '{}'::jsonb END) AS e
  WHERE jsonb_typeof(e.value) = 'string'
$$;
--> statement-breakpoint
-- The scope of an activity's fields: its built-in type, or its custom type's id.
CREATE FUNCTION smart_view_activity_scope(type text, custom_type_id text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT 'activity:' || CASE WHEN type = 'custom' THEN 'custom:' || coalesce(custom_type_id, '') ELSE type END
$$;
--> statement-breakpoint
-- A live lead's facts (its additional properties, source '') and a live activity's (its fields,
-- source the activity). One statement-level trigger per event (transition tables allow one event
-- each), as lead_search_terms: an update rewrites only the facts that changed, a trash or delete
-- removes them, a restore puts them back.
CREATE FUNCTION smart_view_lead_facts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO smart_view_facts (org_id, fact, lead_id, source_id)
      SELECT n.org_id, f, n.id, '' FROM new_rows n, smart_view_facts_of('custom', n.custom) f
      WHERE n.deleted_at IS NULL;
  ELSIF TG_OP = 'DELETE' THEN
    DELETE FROM smart_view_facts t
      USING (SELECT o.org_id, f AS fact, o.id AS lead_id
             FROM old_rows o, smart_view_facts_of('custom', o.custom) f WHERE o.deleted_at IS NULL) gone
      WHERE t.org_id = gone.org_id AND t.fact = gone.fact AND t.lead_id = gone.lead_id AND t.source_id = '';
  ELSE
    DELETE FROM smart_view_facts t
      USING (SELECT o.org_id, f AS fact, o.id AS lead_id
             FROM old_rows o, smart_view_facts_of('custom', o.custom) f WHERE o.deleted_at IS NULL
             EXCEPT
             SELECT n.org_id, f, n.id
             FROM new_rows n, smart_view_facts_of('custom', n.custom) f WHERE n.deleted_at IS NULL) gone
      WHERE t.org_id = gone.org_id AND t.fact = gone.fact AND t.lead_id = gone.lead_id AND t.source_id = '';
    INSERT INTO smart_view_facts (org_id, fact, lead_id, source_id)
      SELECT n.org_id, f, n.id, ''
      FROM new_rows n, smart_view_facts_of('custom', n.custom) f WHERE n.deleted_at IS NULL
      EXCEPT
      SELECT o.org_id, f, o.id, ''
      FROM old_rows o, smart_view_facts_of('custom', o.custom) f WHERE o.deleted_at IS NULL;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION smart_view_activity_facts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO smart_view_facts (org_id, fact, lead_id, source_id)
      SELECT n.org_id, f, n.lead_id, n.id
      FROM new_rows n, smart_view_facts_of(smart_view_activity_scope(n.type, n.custom_activity_type_id), n.fields) f
      WHERE n.deleted_at IS NULL;
  ELSIF TG_OP = 'DELETE' THEN
    DELETE FROM smart_view_facts t
      USING (SELECT o.org_id, f AS fact, o.lead_id, o.id AS source_id
             FROM old_rows o, smart_view_facts_of(smart_view_activity_scope(o.type, o.custom_activity_type_id), o.fields) f
             WHERE o.deleted_at IS NULL) gone
      WHERE t.org_id = gone.org_id AND t.fact = gone.fact AND t.lead_id = gone.lead_id
        AND t.source_id = gone.source_id;
  ELSE
    DELETE FROM smart_view_facts t
      USING (SELECT o.org_id, f AS fact, o.lead_id, o.id AS source_id
             FROM old_rows o, smart_view_facts_of(smart_view_activity_scope(o.type, o.custom_activity_type_id), o.fields) f
             WHERE o.deleted_at IS NULL
             EXCEPT
             SELECT n.org_id, f, n.lead_id, n.id
             FROM new_rows n, smart_view_facts_of(smart_view_activity_scope(n.type, n.custom_activity_type_id), n.fields) f
             WHERE n.deleted_at IS NULL) gone
      WHERE t.org_id = gone.org_id AND t.fact = gone.fact AND t.lead_id = gone.lead_id
        AND t.source_id = gone.source_id;
    INSERT INTO smart_view_facts (org_id, fact, lead_id, source_id)
      SELECT n.org_id, f, n.lead_id, n.id
      FROM new_rows n, smart_view_facts_of(smart_view_activity_scope(n.type, n.custom_activity_type_id), n.fields) f
      WHERE n.deleted_at IS NULL
      EXCEPT
      SELECT o.org_id, f, o.lead_id, o.id
      FROM old_rows o, smart_view_facts_of(smart_view_activity_scope(o.type, o.custom_activity_type_id), o.fields) f
      WHERE o.deleted_at IS NULL;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER smart_view_facts_insert AFTER INSERT ON leads
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION smart_view_lead_facts_apply();
--> statement-breakpoint
CREATE TRIGGER smart_view_facts_update AFTER UPDATE ON leads
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION smart_view_lead_facts_apply();
--> statement-breakpoint
CREATE TRIGGER smart_view_facts_delete AFTER DELETE ON leads
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION smart_view_lead_facts_apply();
--> statement-breakpoint
CREATE TRIGGER smart_view_facts_insert AFTER INSERT ON activities
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION smart_view_activity_facts_apply();
--> statement-breakpoint
CREATE TRIGGER smart_view_facts_update AFTER UPDATE ON activities
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION smart_view_activity_facts_apply();
--> statement-breakpoint
CREATE TRIGGER smart_view_facts_delete AFTER DELETE ON activities
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION smart_view_activity_facts_apply();
--> statement-breakpoint
INSERT INTO smart_view_facts (org_id, fact, lead_id, source_id)
  SELECT l.org_id, f, l.id, '' FROM leads l, smart_view_facts_of('custom', l.custom) f
  WHERE l.deleted_at IS NULL;
--> statement-breakpoint
INSERT INTO smart_view_facts (org_id, fact, lead_id, source_id)
  SELECT a.org_id, f, a.lead_id, a.id
  FROM activities a, smart_view_facts_of(smart_view_activity_scope(a.type, a.custom_activity_type_id), a.fields) f
  WHERE a.deleted_at IS NULL;
