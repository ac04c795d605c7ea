// Workflows' data functions. The public shapes live in shape.ts and are re-exported here, so other
// areas (the email-send worker enrolling a lead after sending) import them from the store.
export {
  ENROLLMENT_STATUSES,
  type EnrollmentRecord,
  enrollmentSchema,
  serializeEnrollment,
  triggeredPayload,
} from './shape.ts';
