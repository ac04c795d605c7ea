// The role table is built from the tiers each area declares with its permissions
// (tools/<area>/catalogue.ts, core/access.ts buildRoleTable). This locks it to the grants the
// specification's role table gave before the areas declared them: written out as a literal on
// purpose, so a tier changed by mistake in one area's declaration fails here instead of silently
// widening or narrowing what a role may do.
import { describe, expect, it } from 'vitest';
import { type Permission, ROLES, type Role, roleHolds, TIERS } from '../core/access.ts';
import { buildCatalogue } from '../core/catalogue.ts';
import { AREAS, CATALOGUE } from '../tools/index.ts';

const READ = [
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
] as const satisfies readonly Permission[];
const OWN_KEYS = [
  'settings.api_keys.create',
  'settings.api_keys.view_own',
  'settings.api_keys.delete',
] as const satisfies readonly Permission[];
const WRITE = [
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
] as const satisfies readonly Permission[];
const MANAGE = [
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
  'settings.webhooks.view_own',
  'forecast.view',
  'settings.project_templates.manage',
] as const satisfies readonly Permission[];
const ADMIN = [
  'users.create',
  'users.edit',
  'users.deactivate',
  'settings.webhooks.view_global',
  'settings.webhooks.create',
  'settings.webhooks.edit',
  'settings.webhooks.delete',
  'settings.custom_objects.manage',
  'settings.custom_activity_types.manage',
] as const satisfies readonly Permission[];
const OWNER = ['users.delete'] as const satisfies readonly Permission[];

/** Today's grants, role by role, as the specification's role table has them. */
const EXPECTED: Record<Role, readonly Permission[]> = {
  owner: [...READ, ...OWN_KEYS, ...WRITE, ...MANAGE, ...ADMIN, ...OWNER],
  admin: [...READ, ...OWN_KEYS, ...WRITE, ...MANAGE, ...ADMIN],
  manager: [...READ, ...OWN_KEYS, ...WRITE, ...MANAGE],
  member: [...READ, ...OWN_KEYS, ...WRITE],
  viewer: [...READ, ...OWN_KEYS],
};

/** Every permission locked above (the owner holds them all). */
const LOCKED: readonly string[] = EXPECTED.owner;
const isLocked = (permission: string) => LOCKED.includes(permission);

/**
 * Permissions of areas added after this lock (npm run scaffold:area writes one, test/scaffold.test.ts):
 * they follow the tiers their area declares, and adding an area needs no line here
 * (docs/decisions.md "The scaffold").
 */
const LATER_TIERS = new Map(
  AREAS.flatMap((area) => Object.entries(area.brings?.permissions ?? {})).filter(([name]) => !isLocked(name)),
);

describe('the role table built from the areas’ declared tiers', () => {
  for (const role of ROLES) {
    it(`gives ${role} exactly today’s grants`, () => {
      const locked = [...CATALOGUE.access.roles[role]].filter(isLocked);
      expect(locked.sort()).toEqual([...EXPECTED[role]].sort());
    });

    it(`gives ${role} the permissions of later areas by their declared tiers`, () => {
      const later = [...CATALOGUE.access.roles[role]].filter((p) => !isLocked(p));
      const held = [...LATER_TIERS].filter(([, tier]) => roleHolds(role, tier)).map(([name]) => name);
      expect(later.sort()).toEqual(held.sort());
    });
  }

  it('knows every permission once, each locked one among them', () => {
    const locked = [...CATALOGUE.access.permissions].filter(isLocked);
    expect(locked.sort()).toEqual([...LOCKED].sort());
    expect(CATALOGUE.access.permissions.length).toBe(LOCKED.length + LATER_TIERS.size);
    expect(new Set(CATALOGUE.access.permissions).size).toBe(CATALOGUE.access.permissions.length);
  });

  it('orders the tiers so each role holds the tiers below its own', () => {
    expect(TIERS.filter((tier) => roleHolds('manager', tier))).toEqual(['read', 'write', 'manage']);
    expect(TIERS.filter((tier) => roleHolds('viewer', tier))).toEqual(['read']);
    expect(TIERS.filter((tier) => roleHolds('owner', tier))).toEqual([...TIERS]);
  });

  it('refuses a permission two areas both declare', () => {
    const twice = [
      { name: 'one', brings: { permissions: { 'leads.view': 'read' as const } } },
      { name: 'two', brings: { permissions: { 'leads.view': 'read' as const } } },
    ];
    expect(() => buildCatalogue(twice)).toThrow(/declared by both one and two/);
  });
});
