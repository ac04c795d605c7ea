// Who may do what, as data: the role -> permission table, the plan -> feature table and the token
// scope rules. The invoke pipeline reads these; no tool or adapter hard-codes a role or a plan.
import type { Plan } from './config.ts';
import { AppError } from './errors.ts';

export const ROLES = ['owner', 'admin', 'manager', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = [
  'leads.view',
  'leads.create',
  'leads.edit',
  'leads.delete',
  'users.view',
  'users.create',
  'users.edit',
  'users.deactivate',
  'users.delete',
  'settings.api_keys.create',
  'settings.api_keys.view_own',
  'settings.api_keys.delete',
  'settings.webhooks.view_global',
  'settings.webhooks.view_own',
  'settings.webhooks.create',
  'settings.webhooks.edit',
  'settings.webhooks.delete',
  'trash.view',
  'trash.restore',
  'contacts.view',
  'contacts.create',
  'contacts.edit',
  'contacts.delete',
  'opportunities.view',
  'opportunities.create',
  'opportunities.edit',
  'opportunities.delete',
  'invoices.view',
  'invoices.create',
  'invoices.edit',
  'invoices.delete',
  'estimates.view',
  'estimates.create',
  'estimates.edit',
  'estimates.delete',
  'proposals.view',
  'proposals.create',
  'proposals.edit',
  'proposals.delete',
  'projects.view',
  'projects.create',
  'projects.edit',
  'projects.delete',
  // Project templates (the onboarding checklist among them) are workspace settings.
  'settings.project_templates.manage',
  'activities.view',
  'activities.create',
  'activities.edit',
  'activities.delete',
  'tasks.view',
  'tasks.create',
  'tasks.edit',
  'tasks.delete',
  'smart_views.view',
  'smart_views.create',
  'smart_views.edit',
  // Edit or delete shared views someone else created (everyone may edit and delete their own).
  'smart_views.manage_shared',
  'custom_objects.view',
  'custom_objects.create',
  'custom_objects.edit',
  'custom_objects.delete',
  // Definitions: custom objects' and custom activity types' fields are workspace settings.
  'settings.custom_objects.manage',
  'settings.custom_activity_types.manage',
  // Forecast accuracy: a management report, for managers and up.
  'forecast.view',
  // A user's own connected mail accounts (no one sees or sends through another's).
  'connected_accounts.view',
  'connected_accounts.manage',
  // Scheduled email to leads: reading the schedule, scheduling and cancelling.
  'email.view',
  'email.send',
  // Workflows (sequences): definitions and enrolling leads in them.
  'workflows.view',
  'workflows.create',
  'workflows.edit',
  'workflows.delete',
  'workflows.enroll',
  // Edit, pause, activate or delete a workflow someone else created (everyone may change their own).
  'workflows.manage_any',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const crmRead: Permission[] = [
  'leads.view',
  'users.view',
  'trash.view',
  'contacts.view',
  'opportunities.view',
  'invoices.view',
  'estimates.view',
  'proposals.view',
  'projects.view',
  'activities.view',
  'tasks.view',
  'smart_views.view',
  'custom_objects.view',
  'connected_accounts.view',
  'email.view',
  'workflows.view',
];
const ownKeys: Permission[] = [
  'settings.api_keys.create',
  'settings.api_keys.view_own',
  'settings.api_keys.delete',
];
const crmWrite: Permission[] = [
  'leads.create',
  'leads.edit',
  'trash.restore',
  'contacts.create',
  'contacts.edit',
  'opportunities.create',
  'opportunities.edit',
  'invoices.create',
  'invoices.edit',
  'estimates.create',
  'estimates.edit',
  'proposals.create',
  'proposals.edit',
  'projects.create',
  'projects.edit',
  'activities.create',
  'activities.edit',
  // Members log and tidy their own day: notes, calls and tasks are theirs to delete too.
  'activities.delete',
  'tasks.create',
  'tasks.edit',
  'tasks.delete',
  'smart_views.create',
  'smart_views.edit',
  'custom_objects.create',
  'custom_objects.edit',
  'connected_accounts.manage',
  'email.send',
  'workflows.create',
  'workflows.edit',
  'workflows.enroll',
];
/** Deleting records others rely on (leads, contacts, deals, custom records) is for managers and up. */
const crmDelete: Permission[] = [
  'leads.delete',
  'contacts.delete',
  'opportunities.delete',
  'invoices.delete',
  'estimates.delete',
  'proposals.delete',
  'projects.delete',
  'custom_objects.delete',
  'smart_views.manage_shared',
  'workflows.delete',
  'workflows.manage_any',
];

/**
 * The role table. Owners hold everything; only they delete users (the specification's state
 * table). Admins run the workspace (including custom object and activity type definitions);
 * managers and members work records (only managers delete leads, contacts, deals and custom
 * records; members delete their activities and tasks); viewers read. Every role manages its own API keys: a key never exceeds its user's role anyway.
 */
export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set(PERMISSIONS),
  admin: new Set(PERMISSIONS.filter((p) => p !== 'users.delete')),
  manager: new Set([
    ...crmRead,
    ...crmWrite,
    ...crmDelete,
    ...ownKeys,
    'settings.webhooks.view_own',
    'forecast.view',
    'settings.project_templates.manage',
  ]),
  member: new Set([...crmRead, ...crmWrite, ...ownKeys]),
  viewer: new Set([...crmRead, ...ownKeys]),
};

export function roleHas(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export const FEATURES = [
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
] as const;
export type Feature = (typeof FEATURES)[number];

const starter: Feature[] = ['webhooks', 'smart_views', 'task_snooze'];
const pro: Feature[] = [
  ...starter,
  'custom_objects',
  'custom_activity_types',
  'estimates',
  'projects',
  'surveys',
  'forecasting',
];

/** DESIGN.md's plan table; a feature not listed here at all is on every plan. */
export const PLAN_FEATURES: Record<Plan, ReadonlySet<Feature>> = {
  free: new Set(),
  starter: new Set(starter),
  pro: new Set(pro),
  enterprise: new Set([...pro, 'call_monitoring']),
};

export const PLANS = Object.keys(PLAN_FEATURES) as Plan[];

export function isPlan(value: string): value is Plan {
  return Object.hasOwn(PLAN_FEATURES, value);
}

export type FeatureCheck = { ok: true } | { ok: false; reason: 'plan_upgrade_required' | 'feature_disabled' };

export function checkFeature(plan: string, disabled: readonly string[], feature: Feature): FeatureCheck {
  const planFeatures = isPlan(plan) ? PLAN_FEATURES[plan] : PLAN_FEATURES.free;
  if (!planFeatures.has(feature)) return { ok: false, reason: 'plan_upgrade_required' };
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

/**
 * DESIGN.md "Scopes for every tool": the families every other tool belongs to. Their scopes are
 * never defaults, so a key reaches users, webhooks, settings, custom objects or email only when asked for.
 */
export const EXTRA_SCOPE_FAMILIES = ['users', 'webhooks', 'settings', 'custom_objects', 'email'] as const;

export const SCOPE_FAMILIES = [...SCOPED_RESOURCES, ...EXTRA_SCOPE_FAMILIES] as const;
/** The family whose `read:`/`write:` scope a token needs for a tool or a record type. */
export type ScopeFamily = (typeof SCOPE_FAMILIES)[number];

export const MCP_SCOPES = ['mcp:read', 'mcp:write'] as const;

/**
 * Every scope that grants something. A key may also hold other strings (the specification does not
 * validate scopes against a list): they are stored as given and grant nothing (unknownScopes).
 */
export const KNOWN_SCOPES: readonly string[] = [
  ...SCOPE_FAMILIES.flatMap((f) => [`read:${f}`, `write:${f}`]),
  ...MCP_SCOPES,
];

export const DEFAULT_SCOPES: readonly string[] = SCOPED_RESOURCES.flatMap((r) => [`read:${r}`, `write:${r}`]);

/** The scopes of `scopes` that grant nothing, in their order: what a key creation warns about. */
export function unknownScopes(scopes: readonly string[]): string[] {
  return scopes.filter((s) => !KNOWN_SCOPES.includes(s));
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
export function scopeMissing(scope: string): AppError {
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
