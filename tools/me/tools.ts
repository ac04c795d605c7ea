// Who am I: lets an assistant learn its organization, user, role, plan and scopes before acting.
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { type Feature, isPlan, type PlanTable } from '../../core/access.ts';
import { organizations, users } from '../../core/db/schema.ts';
import { AppError } from '../../core/errors.ts';
import { organizationSchema, serializeOrganization } from '../../core/organizations.ts';
import { defineTool } from '../../core/tool.ts';
import { serializeUser, userSchema } from '../../core/users.ts';

/**
 * The order /me has always listed features in: the specification's plan table (docs/contracts.md
 * "Plans"). The plan table itself follows the area list, which would reorder the answer; a feature
 * declared later and missing here comes after these, in the plan table's order.
 */
const LISTED_ORDER: readonly Feature[] = [
  'webhooks',
  'smart_views',
  'task_snooze',
  'custom_objects',
  'custom_activity_types',
  'estimates',
  'projects',
  'surveys',
  'forecasting',
  'call_monitoring',
];

function listedRank(feature: Feature): number {
  const rank = LISTED_ORDER.indexOf(feature);
  return rank === -1 ? LISTED_ORDER.length : rank;
}

/** get_me, reading the plan table (tools/index.ts CATALOGUE) when called. */
export function getMeTool(plans: () => PlanTable) {
  return defineTool({
    name: 'get_me',
    title: 'Who am I',
    description:
      'Returns the caller: organization, plan features, user, role, token kind and scopes. Call it first to learn what you may do.',
    input: z.strictObject({}),
    output: z.object({
      organization: organizationSchema,
      user: userSchema,
      features: z.array(z.string()).describe('Plan features currently available to the organization'),
      token_kind: z.enum(['session', 'pat', 'oauth']).describe('How the caller authenticated'),
      scopes: z.array(z.string()).nullable().describe('Scopes of the token; null for session tokens'),
    }),
    access: { kind: 'read', resource: null, permission: null },
    async handler(_input, { db, auth }) {
      const [org] = await db.select().from(organizations).where(eq(organizations.id, auth.orgId));
      const [user] = await db.select().from(users).where(eq(users.id, auth.userId));
      if (!org || !user) throw new AppError('not_found');
      const planFeatures = isPlan(org.plan) ? plans().plans[org.plan] : [];
      return {
        organization: serializeOrganization(org),
        user: serializeUser(user),
        features: [...planFeatures]
          .sort((a, b) => listedRank(a) - listedRank(b))
          .filter((f) => !org.disabledFeatures.includes(f)),
        token_kind: auth.tokenKind,
        scopes: auth.scopes ? [...auth.scopes] : null,
      };
    },
  });
}
