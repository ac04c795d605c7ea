// The tool the documents share about drafts (tools/documents/drafts.ts holds the rule): delete_<kind>
// deletes a draft for good and refuses any other state with the 400 invalid_transition. Each area
// declares only its description and its permission.
import { z } from 'zod';
import type { RecordContext } from '../../core/records.ts';
import { messageOutput, objectId } from '../../core/schemas.ts';
import { defineTool, type ToolAccess } from '../../core/tool.ts';

export function deleteDraftTool(spec: {
  kind: 'invoice' | 'estimate' | 'proposal';
  /** The resource as the answer names it: `Invoice` -> "Invoice deleted". */
  label: string;
  description: string;
  access: ToolAccess;
  deleteDraft(ctx: RecordContext, id: string): Promise<void>;
}) {
  return defineTool({
    name: `delete_${spec.kind}`,
    title: `Delete a draft ${spec.kind}`,
    description: spec.description,
    input: z.strictObject({ id: objectId(spec.kind) }),
    output: messageOutput,
    access: spec.access,
    errors: [{ code: 'invalid_transition', when: `the ${spec.kind} is no longer a draft` }],
    annotations: { destructiveHint: true },
    toolset: 'billing',
    async handler(input, ctx) {
      await spec.deleteDraft(ctx, input.id);
      return { message: `${spec.label} deleted` };
    },
  });
}
