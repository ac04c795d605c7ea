CREATE TABLE "lead_search_terms" (
	"org_id" text NOT NULL,
	"term" text collate "C" NOT NULL,
	"lead_id" text NOT NULL,
	CONSTRAINT "lead_search_terms_org_id_term_lead_id_pk" PRIMARY KEY("org_id","term","lead_id")
);
--> statement-breakpoint
ALTER TABLE "lead_search_terms" ADD CONSTRAINT "lead_search_terms_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- hand-written below
ALTER TABLE lead_search_terms ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON lead_search_terms
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON lead_search_terms TO crm_app;
--> statement-breakpoint
-- The words of a live lead's `search` vector (tsvector_to_array: its lexemes, as the GIN index
-- holds them), one row per (word, lead); a trashed lead has none. One statement-level trigger per
-- event (transition tables allow one event each): a bulk insert writes its terms in one statement,
-- and an update rewrites only the words that changed (a status change: one word out, one in).
CREATE FUNCTION lead_search_terms_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO lead_search_terms (org_id, term, lead_id)
      SELECT n.org_id, w.term, n.id
      FROM new_rows n, unnest(tsvector_to_array(n.search)) AS w(term)
      WHERE n.deleted_at IS NULL;
  ELSIF TG_OP = 'DELETE' THEN
    DELETE FROM lead_search_terms t
      USING (SELECT o.org_id, w.term, o.id AS lead_id
             FROM old_rows o, unnest(tsvector_to_array(o.search)) AS w(term)
             WHERE o.deleted_at IS NULL) gone
      WHERE t.org_id = gone.org_id AND t.term = gone.term AND t.lead_id = gone.lead_id;
  ELSE
    DELETE FROM lead_search_terms t
      USING (SELECT o.org_id, w.term, o.id AS lead_id
             FROM old_rows o, unnest(tsvector_to_array(o.search)) AS w(term)
             WHERE o.deleted_at IS NULL
             EXCEPT
             SELECT n.org_id, w.term, n.id
             FROM new_rows n, unnest(tsvector_to_array(n.search)) AS w(term)
             WHERE n.deleted_at IS NULL) gone
      WHERE t.org_id = gone.org_id AND t.term = gone.term AND t.lead_id = gone.lead_id;
    INSERT INTO lead_search_terms (org_id, term, lead_id)
      SELECT n.org_id, w.term, n.id
      FROM new_rows n, unnest(tsvector_to_array(n.search)) AS w(term)
      WHERE n.deleted_at IS NULL
      EXCEPT
      SELECT o.org_id, w.term, o.id
      FROM old_rows o, unnest(tsvector_to_array(o.search)) AS w(term)
      WHERE o.deleted_at IS NULL;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER lead_search_terms_insert AFTER INSERT ON leads
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lead_search_terms_apply();
--> statement-breakpoint
CREATE TRIGGER lead_search_terms_update AFTER UPDATE ON leads
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lead_search_terms_apply();
--> statement-breakpoint
CREATE TRIGGER lead_search_terms_delete AFTER DELETE ON leads
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION lead_search_terms_apply();
--> statement-breakpoint
INSERT INTO lead_search_terms (org_id, term, lead_id)
  SELECT l.org_id, w.term, l.id
  FROM leads l, unnest(tsvector_to_array(l.search)) AS w(term)
  WHERE l.deleted_at IS NULL;
