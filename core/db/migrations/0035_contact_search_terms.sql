CREATE TABLE "contact_search_terms" (
	"org_id" text NOT NULL,
	"term" text collate "C" NOT NULL,
	"contact_id" text NOT NULL,
	"positions" "tsvector" NOT NULL,
	"name_is_term" boolean NOT NULL,
	CONSTRAINT "contact_search_terms_org_id_term_contact_id_pk" PRIMARY KEY("org_id","term","contact_id")
);
--> statement-breakpoint
ALTER TABLE "contact_search_terms" ADD CONSTRAINT "contact_search_terms_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- hand-written below
ALTER TABLE contact_search_terms ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON contact_search_terms
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON contact_search_terms TO crm_app;
--> statement-breakpoint
-- As opportunity_search_terms (migration 0034): each word of a live contact's vector, its reduced
-- vector and whether the contact's name is that word; an update rewrites only what changed.
CREATE FUNCTION contact_search_terms_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO contact_search_terms (org_id, term, contact_id, positions, name_is_term)
      SELECT n.org_id, w.term, n.id, w.positions, w.name_is_term
      FROM new_rows n, search_terms_of(n.search, n.name) w
      WHERE n.deleted_at IS NULL;
  ELSIF TG_OP = 'DELETE' THEN
    DELETE FROM contact_search_terms t
      USING (SELECT o.org_id, w AS term, o.id AS contact_id
             FROM old_rows o, unnest(tsvector_to_array(o.search)) AS w
             WHERE o.deleted_at IS NULL) gone
      WHERE t.org_id = gone.org_id AND t.term = gone.term AND t.contact_id = gone.contact_id;
  ELSE
    DELETE FROM contact_search_terms t
      USING (SELECT o.org_id, w.term, o.id AS contact_id, w.positions, w.name_is_term
             FROM old_rows o, search_terms_of(o.search, o.name) w
             WHERE o.deleted_at IS NULL
             EXCEPT
             SELECT n.org_id, w.term, n.id, w.positions, w.name_is_term
             FROM new_rows n, search_terms_of(n.search, n.name) w
             WHERE n.deleted_at IS NULL) gone
      WHERE t.org_id = gone.org_id AND t.term = gone.term AND t.contact_id = gone.contact_id;
    INSERT INTO contact_search_terms (org_id, term, contact_id, positions, name_is_term)
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
CREATE TRIGGER contact_search_terms_insert AFTER INSERT ON contacts
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_search_terms_apply();
--> statement-breakpoint
CREATE TRIGGER contact_search_terms_update AFTER UPDATE ON contacts
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_search_terms_apply();
--> statement-breakpoint
CREATE TRIGGER contact_search_terms_delete AFTER DELETE ON contacts
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_search_terms_apply();
--> statement-breakpoint
ALTER TABLE contact_search_terms DROP CONSTRAINT contact_search_terms_org_id_term_contact_id_pk;
--> statement-breakpoint
INSERT INTO contact_search_terms (org_id, term, contact_id, positions, name_is_term)
  SELECT c.org_id, w.term, c.id, w.positions, w.name_is_term
  FROM contacts c, search_terms_of(c.search, c.name) w
  WHERE c.deleted_at IS NULL;
--> statement-breakpoint
ALTER TABLE contact_search_terms ADD CONSTRAINT contact_search_terms_org_id_term_contact_id_pk
  PRIMARY KEY (org_id, term, contact_id) INCLUDE (positions, name_is_term);
