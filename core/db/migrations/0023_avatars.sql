CREATE TABLE "avatars" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" text NOT NULL,
	"upload_key" text NOT NULL,
	"stored_key" text,
	"content_type" text NOT NULL,
	"size_bytes" integer NOT NULL,
	"created_by" text,
	"confirmed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "avatar_url" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "avatar_url" text;--> statement-breakpoint
ALTER TABLE "avatars" ADD CONSTRAINT "avatars_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "avatars_upload_key_uq" ON "avatars" USING btree ("upload_key");--> statement-breakpoint
CREATE UNIQUE INDEX "avatars_current_uq" ON "avatars" USING btree ("org_id","target_type","target_id") WHERE "avatars"."confirmed_at" is not null;--> statement-breakpoint
CREATE INDEX "avatars_org_created_idx" ON "avatars" USING btree ("org_id","created_at");--> statement-breakpoint
-- hand-written below
ALTER TABLE avatars ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON avatars
  USING (org_id = current_setting('app.org_id', true))
  WITH CHECK (org_id = current_setting('app.org_id', true));
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON avatars TO crm_app;
