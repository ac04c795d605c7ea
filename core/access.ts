// Who may do what, as data: the role -> permission table and the plan -> feature table (both built
// from the areas' declarations) and the token scope rules. The invoke pipeline reads these; no tool or adapter hard-codes a role or a plan.
import type { Plan } from './config.ts';
import { AppError } from './errors.ts';

export const ROLES = ['owner', 'admin', 'manager', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/**
 * How widely a permission is held, lowest role first: `read` every role (viewers up), `write`
 * members up, `manage` managers up, `admin` admins and owners, `owner` owners alone. The role table
 * is monotone (each role holds what the one below holds), so a tier per permission is the whole
 * table; an area declares its permissions with their tiers and `buildRoleTable` turns them into it.
 */
export const TIERS = ['read', 'write', 'manage', 'admin', 'owner'] as const;
export type Tier = (typeof TIERS)[number];

/** The lowest tier each role reaches (owners hold every tier, viewers only `read`). */
const ROLE_TIER: Record<Role, Tier> = {
  owner: 'owner',
  admin: 'admin',
  manager: 'manage',
  member: 'write',
  viewer: 'read',
};

/** True when `role` holds permissions of `tier`: for checks an area makes with its own declared tiers. */
export function roleHolds(role: Role, tier: Tier): boolean {
  return TIERS.indexOf(ROLE_TIER[role]) >= TIERS.indexOf(tier);
}

/**
 * Every role permission and its tier. Empty here on purpose: each area adds the permissions it
 * brings by declaration merging next to its declaration (`tools/<area>/catalogue.ts`), so the kernel
 * knows no area while permission names stay checked at compile time.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in each area's catalogue
export interface PermissionCatalog {}
export type Permission = keyof PermissionCatalog & string;

/** What an area declares: each permission it brings with the tier that holds it. */
export type PermissionTiers = Readonly<Record<string, Tier>>;

/** The role -> permission table and the list of every permission, built from the areas' declarations. */
export interface RoleTable {
  permissions: readonly Permission[];
  roles: Readonly<Record<Role, ReadonlySet<Permission>>>;
}

/**
 * The role table from every permission's tier (in declaration order). Owners hold everything and
 * only they delete users; the rest follows from each permission's declared tier.
 */
export function buildRoleTable(tiers: ReadonlyMap<Permission, Tier>): RoleTable {
  const permissions = [...tiers.keys()];
  const holding = (role: Role) =>
    new Set(permissions.filter((p) => roleHolds(role, tiers.get(p) ?? 'owner')));
  return {
    permissions,
    roles: {
      owner: holding('owner'),
      admin: holding('admin'),
      manager: holding('manager'),
      member: holding('member'),
      viewer: holding('viewer'),
    },
  };
}

export function roleHas(table: RoleTable, role: Role, permission: Permission): boolean {
  return table.roles[role].has(permission);
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** The plans, lowest first: each has every feature of the plans below it (docs/contracts.md "Plans"). */
export const PLANS = ['free', 'starter', 'pro', 'enterprise'] as const satisfies readonly Plan[];

/**
 * Every plan feature with the lowest plan that has it. Empty here on purpose: the area that gates a
 * feature adds it by declaration merging beside its declaration (`tools/<area>/catalogue.ts`
 * `features`), and tools/reserved.ts those of areas not built yet, so the kernel knows no feature
 * while feature names stay checked at compile time.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in each area's catalogue
export interface FeatureCatalog {}
export type Feature = keyof FeatureCatalog & string;

/** What an area declares: each plan feature it gates with the lowest plan that has it. */
export type FeaturePlans = Readonly<Record<string, Plan>>;

/** The plan -> feature table, built from the areas' declarations. */
export interface PlanTable {
  /** Every feature, in declaration order. */
  features: readonly Feature[];
  /** The lowest plan that has each feature. */
  lowest: ReadonlyMap<Feature, Plan>;
  /** Each plan's features: by the plan that brings them (lowest first), then in declaration order. */
  plans: Readonly<Record<Plan, readonly Feature[]>>;
}

/** True when `plan` is `lowest` or above it. */
function reaches(plan: Plan, lowest: Plan): boolean {
  return PLANS.indexOf(plan) >= PLANS.indexOf(lowest);
}

/** The plan table from every feature's lowest plan (in declaration order). */
export function buildPlanTable(lowest: ReadonlyMap<Feature, Plan>): PlanTable {
  const features = [...lowest.keys()];
  const byPlan = PLANS.flatMap((plan) => features.filter((f) => lowest.get(f) === plan));
  const holding = (plan: Plan) => byPlan.filter((f) => reaches(plan, lowest.get(f) ?? 'free'));
  return {
    features,
    lowest,
    plans: {
      free: holding('free'),
      starter: holding('starter'),
      pro: holding('pro'),
      enterprise: holding('enterprise'),
    },
  };
}

export function isPlan(value: string): value is Plan {
  return PLANS.some((plan) => plan === value);
}

export type FeatureCheck = { ok: true } | { ok: false; reason: 'plan_upgrade_required' | 'feature_disabled' };

/**
 * Whether an organization on `plan`, with `disabled` switched off, may use `feature`, whose lowest
 * plan is `lowest` (the plan table's, or the declaring area's own declaration). An unknown plan
 * counts as free.
 */
export function checkFeature(
  plan: string,
  disabled: readonly string[],
  feature: Feature,
  lowest: Plan,
): FeatureCheck {
  if (!reaches(isPlan(plan) ? plan : 'free', lowest)) return { ok: false, reason: 'plan_upgrade_required' };
  if (disabled.includes(feature)) return { ok: false, reason: 'feature_disabled' };
  return { ok: true };
}

/** The specification's scoped resources (its default-scope table): their scopes are the defaults. */
export const SCOPED_RESOURCES = [
  'leads',
  'contacts',
  'opportunities',
  'invoices',
  'proposals',
  'projects',
] as const;
export type ScopedResource = (typeof SCOPED_RESOURCES)[number];

/** What each scoped resource's scopes cover, in plain words (the OAuth consent page reads "See <words>"). */
export const SCOPED_RESOURCE_LABELS: Readonly<Record<ScopedResource, string>> = {
  leads: 'leads (your prospects and clients)',
  contacts: 'contacts of your leads',
  opportunities: 'deals in your pipeline',
  invoices: 'invoices and payments',
  proposals: 'proposals',
  projects: 'projects and logged time',
};

/**
 * The scope families areas introduce beyond the scoped resources (users, webhooks, settings, ...).
 * Their scopes are never defaults, so a key reaches them only when asked for. Empty here on purpose:
 * each area adds its families by declaration merging beside its declaration (`tools/<area>/catalogue.ts`).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in each area's catalogue
export interface ScopeFamilyCatalog {}
/** The family whose `read:`/`write:` scope a token needs for a tool or a record type. */
export type ScopeFamily = ScopedResource | (keyof ScopeFamilyCatalog & string);

export const MCP_SCOPES = ['mcp:read', 'mcp:write'] as const;

/**
 * Every scope that grants something, for the given families. A key may also hold other strings (the
 * specification does not validate scopes against a list): they are stored as given and grant nothing
 * (unknownScopes).
 */
export function knownScopes(families: readonly ScopeFamily[]): string[] {
  return [...families.flatMap((f) => [`read:${f}`, `write:${f}`]), ...MCP_SCOPES];
}

export const DEFAULT_SCOPES: readonly string[] = SCOPED_RESOURCES.flatMap((r) => [`read:${r}`, `write:${r}`]);

/** The scopes of `scopes` that grant nothing, in their order: what a key creation warns about. */
export function unknownScopes(scopes: readonly string[], known: readonly string[]): string[] {
  return scopes.filter((s) => !known.includes(s));
}

/** Scopes a new key holds: the defaults when none are given; `mcp:*` is never a default. */
export function scopesForNewKey(requested: readonly string[] | undefined): string[] {
  if (!requested || requested.length === 0) return [...DEFAULT_SCOPES];
  return [...new Set(requested)];
}

export type Surface = 'rest' | 'mcp';
export type AccessKind = 'read' | 'write';

/**
 * The scope a token must hold to run a tool on a surface, or null when it needs none (get_me, and
 * the trash, which checks each record type's family itself). On MCP, `mcp:write` also grants the
 * read tools; on REST every other tool checks its family's scope, and `write:x` does not imply
 * `read:x` (the specification lists both as separate).
 */
export function requiredScopes(
  surface: Surface,
  kind: AccessKind,
  family: ScopeFamily | null,
): string[] | null {
  if (surface === 'mcp') return kind === 'read' ? ['mcp:read', 'mcp:write'] : ['mcp:write'];
  if (family === null) return null;
  return [`${kind}:${family}`];
}

/** True when `held` satisfies a requirement (any one of `anyOf`). */
export function holdsScope(held: readonly string[], anyOf: readonly string[]): boolean {
  return anyOf.some((s) => held.includes(s));
}

/**
 * Whether holding `held` gives everything `scope` gives, so a key with `scope` would not exceed it:
 * the scope itself, or `mcp:write` for `mcp:read` (it grants the read tools too).
 */
export function scopeCovered(held: readonly string[], scope: string): boolean {
  return held.includes(scope) || (scope === 'mcp:read' && held.includes('mcp:write'));
}

/**
 * Whether a caller's token covers `kind` access to `family` on `surface`. Tools whose family
 * varies per record (the trash, search, smart-view filters) check this themselves; sessions
 * (scopes null) are not limited.
 */
export function tokenAllows(
  scopes: readonly string[] | null,
  surface: Surface,
  kind: AccessKind,
  family: ScopeFamily | null,
): boolean {
  if (scopes === null) return true;
  const needed = requiredScopes(surface, kind, family);
  return needed === null || holdsScope(scopes, needed);
}

/** The specified 403 when a token lacks `scope`: `Token lacks required scope: <scope>`. */
function scopeMissing(scope: string): AppError {
  return new AppError('scope_missing', {
    error: `Token lacks required scope: ${scope}`,
    extra: { required_scope: scope },
  });
}

/** Throws the specified 403 unless the caller's token covers `kind` access to `family` on `surface`. */
export function assertTokenAllows(
  scopes: readonly string[] | null,
  surface: Surface,
  kind: AccessKind,
  family: ScopeFamily,
): void {
  if (scopes === null) return;
  const needed = requiredScopes(surface, kind, family);
  if (needed && !holdsScope(scopes, needed)) throw scopeMissing(needed[0] ?? `${kind}:${family}`);
}
