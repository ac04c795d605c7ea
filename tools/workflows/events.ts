// The event the workflows area emits, with its payload: the new enrollment (the record
// `enroll_in_workflow` returns), with its workflow's name and number of steps. The schema
// documents the webhooks section of the OpenAPI document, and the declaration merging below makes
// `emit` check the payload at compile time.
import { z } from 'zod';
import type { EventSchemas, PayloadsOf } from '../../core/events.ts';
import { enrollmentSchema } from './shape.ts';

export const workflowsEvents = {
  'workflow.triggered': enrollmentSchema.extend({
    workflow_name: z.string().describe('The name of the workflow the lead was enrolled in'),
    step_count: z.number().int().describe('How many steps the enrollment runs'),
  }),
} satisfies EventSchemas;

type WorkflowsEvents = PayloadsOf<typeof workflowsEvents>;

declare module '../../core/events.ts' {
  interface EventCatalog extends WorkflowsEvents {}
}
