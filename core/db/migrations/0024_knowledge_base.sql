CREATE TABLE "kb_articles" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"title" text NOT NULL,
	"body_html" text NOT NULL,
	"body_text" text NOT NULL,
	"category" text,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"is_public" boolean DEFAULT false NOT NULL,
	"is_ai_context" boolean DEFAULT false NOT NULL,
	"sort_order" integer DEFAULT 0 NOT NULL,
	"locale" text DEFAULT 'en' NOT NULL,
	"translation_of" text,
	"outdated" boolean DEFAULT false NOT NULL,
	"published_at" timestamp with time zone,
	"created_by" text,
	"deleted_at" timestamp with time zone,
	"deleted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple', coalesce(title, '')), 'A') || setweight(to_tsvector('simple', coalesce(body_text, '')), 'B')) STORED
);
--> statement-breakpoint
ALTER TABLE "kb_articles" ADD CONSTRAINT "kb_articles_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_articles" ADD CONSTRAINT "kb_articles_translation_of_kb_articles_id_fk" FOREIGN KEY ("translation_of") REFERENCES "public"."kb_articles"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "kb_articles_live_order_idx" ON "kb_articles" USING btree ("org_id","sort_order","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST) WHERE "kb_articles"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "kb_articles_search_idx" ON "kb_articles" USING gin ("search");--> statement-breakpoint
CREATE INDEX "kb_articles_tags_idx" ON "kb_articles" USING gin ("tags");--> statement-breakpoint
CREATE UNIQUE INDEX "kb_articles_translation_locale_uq" ON "kb_articles" USING btree ("translation_of","locale") WHERE "kb_articles"."deleted_at" is null and "kb_articles"."translation_of" is not null;--> statement-breakpoint
CREATE INDEX "kb_articles_org_trash_idx" ON "kb_articles" USING btree ("org_id","deleted_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "kb_articles"."deleted_at" is not null;
--> statement-breakpoint
-- hand-written below
ALTER TABLE kb_articles ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON kb_articles
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON kb_articles TO crm_app;
