// Organizations: the public shape and creation with an owner (signup and the admin API share it).
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { PLANS } from './access.ts';
import type { Plan } from './config.ts';
import type { Executor } from './db/client.ts';
import { type OrganizationRow, organizations, type UserRow } from './db/schema.ts';
import { AppError } from './errors.ts';
import { newId } from './ids.ts';
import { insertUser } from './users.ts';

export const ORG_STATUSES = ['active', 'inactive', 'suspended'] as const;

export const organizationSchema = z
  .object({
    _id: z.string().describe('Organization id'),
    name: z.string().describe('Organization name'),
    plan: z.enum(PLANS).describe('Billing plan: free, starter, pro or enterprise'),
    status: z.enum(ORG_STATUSES).describe('Only active organizations can use the API'),
    // The names are the plan table's (checked when the admin API sets them); the kernel keeps no
    // list of features, so the record shows them as strings (docs/decisions.md "Plan features").
    disabled_features: z
      .array(z.string().describe('A plan feature, e.g. webhooks (docs/contracts.md "Plans")'))
      .describe('Features switched off for this organization'),
    avatar_url: z
      .string()
      .nullable()
      .describe(
        "The organization's logo: a stable URL that needs no token (an <img> src), redirecting to the stored image; null when none was set",
      ),
    created_at: z.string().describe('Creation time (ISO 8601)'),
    updated_at: z.string().describe('Last change (ISO 8601)'),
  })
  .describe('The organization (tenant) with its plan and status');
export type OrganizationRecord = z.infer<typeof organizationSchema>;

export function serializeOrganization(row: OrganizationRow): OrganizationRecord {
  return organizationSchema.parse({
    _id: row.id,
    name: row.name,
    plan: row.plan,
    status: row.status,
    disabled_features: row.disabledFeatures,
    avatar_url: row.avatarUrl,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  });
}

export interface NewOrganization {
  name: string;
  plan: Plan;
  /** The owner; the password in clear or already hashed (core/users.ts NewUser). */
  owner: { name: string; email: string } & ({ password: string } | { passwordHash: string });
}

/** Creates an organization and its owner in the caller's transaction. */
export async function createOrganizationWithOwner(
  tx: Executor,
  input: NewOrganization,
): Promise<{ organization: OrganizationRow; owner: UserRow }> {
  const [organization] = await tx
    .insert(organizations)
    .values({ id: newId(), name: input.name, plan: input.plan })
    .returning();
  if (!organization) throw new Error('insert returned no organization');
  const owner = await insertUser(tx, { orgId: organization.id, role: 'owner', ...input.owner });
  return { organization, owner };
}

export async function getOrganization(db: Executor, id: string): Promise<OrganizationRow> {
  const [row] = await db.select().from(organizations).where(eq(organizations.id, id)).limit(1);
  if (!row) throw new AppError('not_found', { message: 'Organization not found' });
  return row;
}

/** The organization's name (a document's seller, a mail's "from <organization>"), or null for an unknown id. */
export async function organizationName(db: Executor, orgId: string): Promise<string | null> {
  const [org] = await db
    .select({ name: organizations.name })
    .from(organizations)
    .where(eq(organizations.id, orgId));
  return org?.name ?? null;
}
