CREATE TABLE "opportunity_search_terms" (
	"org_id" text NOT NULL,
	"term" text collate "C" NOT NULL,
	"opportunity_id" text NOT NULL,
	"positions" "tsvector" NOT NULL,
	"name_is_term" boolean NOT NULL,
	CONSTRAINT "opportunity_search_terms_org_id_term_opportunity_id_pk" PRIMARY KEY("org_id","term","opportunity_id")
);
--> statement-breakpoint
ALTER TABLE "lead_search_terms" ADD COLUMN "positions" "tsvector" DEFAULT ''::tsvector NOT NULL;--> statement-breakpoint
ALTER TABLE "lead_search_terms" ADD COLUMN "name_is_term" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "opportunity_search_terms" ADD CONSTRAINT "opportunity_search_terms_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- hand-written below
ALTER TABLE opportunity_search_terms ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON opportunity_search_terms
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON opportunity_search_terms TO crm_app;
--> statement-breakpoint
-- The rows of one record's search vector: each word (a lexeme, as the GIN index holds it), the vector
-- reduced to that word with its positions and weights (ts_delete of every other word), and whether
-- the record's name, lower-cased, is that word. ts_rank of a one-word query (prefix or whole word)
-- reads only the entries the query matches, so the reduced vectors of a record's matching words,
-- put back together, rank exactly as its whole vector does.
CREATE FUNCTION search_terms_of(search tsvector, name text)
  RETURNS TABLE (term text, positions tsvector, name_is_term boolean)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT w, ts_delete(search, array_remove(tsvector_to_array(search), w)), coalesce(lower(name) = w, false)
  FROM unnest(tsvector_to_array(search)) AS w
$$;
--> statement-breakpoint
-- lead_search_terms (migration 0032) now also carries the positions and the name flag: the same
-- statement-level triggers, and an update rewrites a word whose positions or flag changed too.
CREATE OR REPLACE FUNCTION lead_search_terms_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO lead_search_terms (org_id, term, lead_id, positions, name_is_term)
      SELECT n.org_id, w.term, n.id, w.positions, w.name_is_term
      FROM new_rows n, search_terms_of(n.search, n.name) w
      WHERE n.deleted_at IS NULL;
  ELSIF TG_OP = 'DELETE' THEN
    DELETE FROM lead_search_terms t
      USING (SELECT o.org_id, w AS term, o.id AS lead_id
             FROM old_rows o, unnest(tsvector_to_array(o.search)) AS w
             WHERE o.deleted_at IS NULL) gone
      WHERE t.org_id = gone.org_id AND t.term = gone.term AND t.lead_id = gone.lead_id;
  ELSE
    DELETE FROM lead_search_terms t
      USING (SELECT o.org_id, w.term, o.id AS lead_id, w.positions, w.name_is_term
             FROM old_rows o, search_terms_of(o.search, o.name) w
             WHERE o.deleted_at IS NULL
             EXCEPT
             SELECT n.org_id, w.term, n.id, w.positions, w.name_is_term
             FROM new_rows n, search_terms_of(n.search, n.name) w
             WHERE n.deleted_at IS NULL) gone
      WHERE t.org_id = gone.org_id AND t.term = gone.term AND t.lead_id = gone.lead_id;
    INSERT INTO lead_search_terms (org_id, term, lead_id, positions, name_is_term)
      SELECT n.org_id, w.term, n.id, w.positions, w.name_is_term
      FROM new_rows n, search_terms_of(n.search, n.name) w
      WHERE n.deleted_at IS NULL
      EXCEPT
      SELECT o.org_id, w.term, o.id, w.positions, w.name_is_term
      FROM old_rows o, search_terms_of(o.search, o.name) w
      WHERE o.deleted_at IS NULL;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION opportunity_search_terms_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO opportunity_search_terms (org_id, term, opportunity_id, positions, name_is_term)
      SELECT n.org_id, w.term, n.id, w.positions, w.name_is_term
      FROM new_rows n, search_terms_of(n.search, nullif(n.note, '')) w
      WHERE n.deleted_at IS NULL;
  ELSIF TG_OP = 'DELETE' THEN
    DELETE FROM opportunity_search_terms t
      USING (SELECT o.org_id, w AS term, o.id AS opportunity_id
             FROM old_rows o, unnest(tsvector_to_array(o.search)) AS w
             WHERE o.deleted_at IS NULL) gone
      WHERE t.org_id = gone.org_id AND t.term = gone.term AND t.opportunity_id = gone.opportunity_id;
  ELSE
    DELETE FROM opportunity_search_terms t
      USING (SELECT o.org_id, w.term, o.id AS opportunity_id, w.positions, w.name_is_term
             FROM old_rows o, search_terms_of(o.search, nullif(o.note, '')) w
             WHERE o.deleted_at IS NULL
             EXCEPT
             SELECT n.org_id, w.term, n.id, w.positions, w.name_is_term
             FROM new_rows n, search_terms_of(n.search, nullif(n.note, '')) w
             WHERE n.deleted_at IS NULL) gone
      WHERE t.org_id = gone.org_id AND t.term = gone.term AND t.opportunity_id = gone.opportunity_id;
    INSERT INTO opportunity_search_terms (org_id, term, opportunity_id, positions, name_is_term)
      SELECT n.org_id, w.term, n.id, w.positions, w.name_is_term
      FROM new_rows n, search_terms_of(n.search, nullif(n.note, '')) w
      WHERE n.deleted_at IS NULL
      EXCEPT
      SELECT o.org_id, w.term, o.id, w.positions, w.name_is_term
      FROM old_rows o, search_terms_of(o.search, nullif(o.note, '')) w
      WHERE o.deleted_at IS NULL;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER opportunity_search_terms_insert AFTER INSERT ON opportunities
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION opportunity_search_terms_apply();
--> statement-breakpoint
CREATE TRIGGER opportunity_search_terms_update AFTER UPDATE ON opportunities
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION opportunity_search_terms_apply();
--> statement-breakpoint
CREATE TRIGGER opportunity_search_terms_delete AFTER DELETE ON opportunities
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION opportunity_search_terms_apply();
--> statement-breakpoint
-- Both tables are filled afresh and their keys built once, over the rows: the key INCLUDEs the
-- ranking columns so a one-word search ranks by an index-only range scan (drizzle's schema has no
-- INCLUDE; the key's columns are the ones it declares).
ALTER TABLE lead_search_terms DROP CONSTRAINT lead_search_terms_org_id_term_lead_id_pk;
--> statement-breakpoint
TRUNCATE lead_search_terms;
--> statement-breakpoint
INSERT INTO lead_search_terms (org_id, term, lead_id, positions, name_is_term)
  SELECT l.org_id, w.term, l.id, w.positions, w.name_is_term
  FROM leads l, search_terms_of(l.search, l.name) w
  WHERE l.deleted_at IS NULL;
--> statement-breakpoint
ALTER TABLE lead_search_terms ADD CONSTRAINT lead_search_terms_org_id_term_lead_id_pk
  PRIMARY KEY (org_id, term, lead_id) INCLUDE (positions, name_is_term);
--> statement-breakpoint
ALTER TABLE opportunity_search_terms DROP CONSTRAINT opportunity_search_terms_org_id_term_opportunity_id_pk;
--> statement-breakpoint
INSERT INTO opportunity_search_terms (org_id, term, opportunity_id, positions, name_is_term)
  SELECT o.org_id, w.term, o.id, w.positions, w.name_is_term
  FROM opportunities o, search_terms_of(o.search, nullif(o.note, '')) w
  WHERE o.deleted_at IS NULL;
--> statement-breakpoint
ALTER TABLE opportunity_search_terms ADD CONSTRAINT opportunity_search_terms_org_id_term_opportunity_id_pk
  PRIMARY KEY (org_id, term, opportunity_id) INCLUDE (positions, name_is_term);
