// Operator actions across tenants: create and change organizations, issue and revoke OAuth tokens.
// The admin HTTP API and the `crm admin` commands both call these with raw input, so one set of
// zod schemas validates both. They run with system access: an operator is outside every tenant.
import { and, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { invalidateCredentials } from './auth/cache.ts';
import { generateOauthToken, hashToken } from './auth/tokens.ts';
import type { Database } from './db/client.ts';
import { oauthTokens, organizations, users } from './db/schema.ts';
import { AppError } from './errors.ts';
import { newId } from './ids.ts';
import { zodDetails } from './invoke.ts';
import {
  createOrganizationWithOwner,
  getOrganization,
  ORG_STATUSES,
  organizationSchema,
  serializeOrganization,
} from './organizations.ts';
import { iso, objectId } from './schemas.ts';
import { emailField, nameField, passwordField, serializeUser, userSchema } from './users.ts';

// The organization record's own plan enum, so the accepted plans can never drift from core/access.ts PLANS.
const planField = organizationSchema.shape.plan;
const MAX_OAUTH_TTL_SECONDS = 5 * 365 * 24 * 60 * 60;

const organizationIdInput = z.strictObject({ id: objectId('organization') });

export const createOrganizationInput = z.strictObject({
  name: z.string().trim().min(1).max(200).describe('Organization name'),
  plan: planField,
  owner: z
    .strictObject({ name: nameField, email: emailField, password: passwordField })
    .describe('The first user, created with the owner role'),
});

/**
 * The organization change an operator may make. The features that can be switched off are the plan
 * table's (tools/index.ts CATALOGUE.plans.features), which the caller passes: the kernel keeps no list.
 */
export function updateOrganizationInputOf(features: readonly string[]) {
  const [first, ...rest] = features;
  if (first === undefined) throw new Error('No plan feature declared');
  return z
    .strictObject({
      plan: planField.optional(),
      status: z
        .enum(ORG_STATUSES)
        .optional()
        .describe('active, or inactive/suspended: every token of the organization then gets 403'),
      disabled_features: z
        .array(z.enum([first, ...rest]))
        .max(features.length)
        .optional()
        .describe(
          'Features switched off for this organization even if its plan includes them (replaces the list)',
        ),
    })
    .refine((v) => v.plan !== undefined || v.status !== undefined || v.disabled_features !== undefined, {
      message: 'Give at least one of plan, status, disabled_features',
    });
}

export const createOauthTokenInput = z.strictObject({
  user_id: objectId('user'),
  app_name: z.string().trim().min(1).max(100).describe('Name of the installed app the token is issued to'),
  scopes: z
    .array(z.string().trim().min(1).max(100).describe('A scope string, e.g. read:leads or mcp:read'))
    .min(1)
    .max(50)
    .describe('Scopes the token holds (1 to 50)'),
  expires_in_seconds: z
    .number()
    .int()
    .min(60)
    .max(MAX_OAUTH_TTL_SECONDS)
    .optional()
    .describe('Lifetime in seconds; without it the token lives until revoked'),
});

const oauthTokenIdInput = z.strictObject({ id: objectId('OAuth token') });

const oauthTokenSchema = z.object({
  _id: z.string().describe('OAuth token id'),
  app_name: z.string().describe('The app the token was issued to'),
  user_id: z.string().describe('The user the token acts as'),
  organization_id: z.string().describe("The user's organization"),
  scopes: z.array(z.string()).describe('Scopes the token holds'),
  expires_at: z.string().nullable().describe('Expiry (ISO 8601), or null for none'),
  created_at: z.string().describe('Creation time (ISO 8601)'),
});

export const createOrganizationOutput = z.object({ organization: organizationSchema, user: userSchema });
export const organizationOutput = z.object({ organization: organizationSchema });
export const createOauthTokenOutput = z.object({
  oauth_token: oauthTokenSchema,
  token: z.string().describe('The token itself (64 hex characters); shown only once'),
});

function parse<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) throw new AppError('validation_failed', { details: zodDetails(parsed.error) });
  return parsed.data;
}

export async function createOrganization(
  db: Database,
  raw: unknown,
): Promise<z.infer<typeof createOrganizationOutput>> {
  const input = parse(createOrganizationInput, raw);
  const { organization, owner } = await db.transaction((tx) => createOrganizationWithOwner(tx, input));
  return { organization: serializeOrganization(organization), user: serializeUser(owner) };
}

export async function showOrganization(
  db: Database,
  rawId: unknown,
): Promise<z.infer<typeof organizationOutput>> {
  const { id } = parse(organizationIdInput, { id: rawId });
  return { organization: serializeOrganization(await getOrganization(db.system, id)) };
}

/** Changes an organization; `features` are the plan table's features (updateOrganizationInputOf). */
export async function updateOrganization(
  db: Database,
  rawId: unknown,
  raw: unknown,
  features: readonly string[],
  now = new Date(),
): Promise<z.infer<typeof organizationOutput>> {
  const { id } = parse(organizationIdInput, { id: rawId });
  const input = parse(updateOrganizationInputOf(features), raw);
  const [row] = await db.system
    .update(organizations)
    .set({
      ...(input.plan !== undefined ? { plan: input.plan } : {}),
      ...(input.status !== undefined ? { status: input.status } : {}),
      ...(input.disabled_features !== undefined
        ? { disabledFeatures: [...new Set(input.disabled_features)] }
        : {}),
      updatedAt: now,
    })
    .where(eq(organizations.id, id))
    .returning();
  if (!row) throw new AppError('not_found', { message: 'Organization not found' });
  // Plan, status and disabled features are part of every cached credential of the organization.
  await invalidateCredentials(db, { orgIds: [row.id] });
  return { organization: serializeOrganization(row) };
}

export async function createOauthToken(
  db: Database,
  raw: unknown,
  now = new Date(),
): Promise<z.infer<typeof createOauthTokenOutput>> {
  const input = parse(createOauthTokenInput, raw);
  const [user] = await db.system
    .select({ id: users.id, orgId: users.orgId, status: users.status })
    .from(users)
    .where(and(eq(users.id, input.user_id), isNull(users.deletedAt)))
    .limit(1);
  if (!user) throw new AppError('not_found', { message: 'User not found' });
  if (user.status !== 'active') {
    throw new AppError('invalid_operation', {
      message: 'The user is deactivated; a token for them would not work',
    });
  }
  const token = generateOauthToken();
  const [row] = await db.system
    .insert(oauthTokens)
    .values({
      id: newId(now),
      orgId: user.orgId,
      userId: user.id,
      appName: input.app_name,
      tokenHash: hashToken(token),
      scopes: [...new Set(input.scopes)],
      expiresAt:
        input.expires_in_seconds !== undefined
          ? new Date(now.getTime() + input.expires_in_seconds * 1000)
          : null,
      createdAt: now,
    })
    .returning();
  if (!row) throw new Error('insert returned no OAuth token');
  return {
    oauth_token: {
      _id: row.id,
      app_name: row.appName,
      user_id: row.userId,
      organization_id: row.orgId,
      scopes: row.scopes,
      expires_at: iso(row.expiresAt),
      created_at: row.createdAt.toISOString(),
    },
    token,
  };
}

/** Revokes an OAuth token; revoking one already revoked is a no-op with the same answer. */
export async function revokeOauthToken(
  db: Database,
  rawId: unknown,
  now = new Date(),
): Promise<{ message: string }> {
  const { id } = parse(oauthTokenIdInput, { id: rawId });
  const [row] = await db.system
    .select({ id: oauthTokens.id, revokedAt: oauthTokens.revokedAt })
    .from(oauthTokens)
    .where(eq(oauthTokens.id, id))
    .limit(1);
  if (!row) throw new AppError('not_found', { message: 'OAuth token not found' });
  if (row.revokedAt === null) {
    await db.system.update(oauthTokens).set({ revokedAt: now }).where(eq(oauthTokens.id, id));
    await invalidateCredentials(db, { credentialIds: [id] });
  }
  return { message: 'OAuth token revoked' };
}
