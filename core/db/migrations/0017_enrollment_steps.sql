-- An enrollment keeps the steps it began with (docs/email.md "Workflows"): enrollments made before
-- this migration take their workflow's current steps, the closest record of what they began with.
ALTER TABLE "workflow_enrollments" ADD COLUMN "steps" jsonb;--> statement-breakpoint
UPDATE "workflow_enrollments" AS e SET "steps" = w."steps" FROM "workflows" AS w WHERE w."id" = e."workflow_id";--> statement-breakpoint
ALTER TABLE "workflow_enrollments" ALTER COLUMN "steps" SET NOT NULL;
