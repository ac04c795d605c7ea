// What the email area is built with (tools/index.ts collects them from the other areas): the hooks
// its sender runs on a sent or failed email and the lookup of an `enroll_in_workflow_id`. The lists
// are read when used, not when the area is built, so the area may be built before the areas that
// declare them (docs/architecture.md "Boundaries").
import type { EmailSentHook, EnrollTargetHook } from '../../core/area.ts';

export interface EmailHooks {
  emailSent(): readonly EmailSentHook[];
  enrollTargets(): readonly EnrollTargetHook[];
}
