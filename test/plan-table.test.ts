// Locks in the plan table the areas' feature declarations build: the table of docs/contracts.md
// "Plans", written out as a literal (what core/access.ts listed before the areas declared it).
import { describe, expect, it } from 'vitest';
import { type FeatureCatalog, PLANS } from '../core/access.ts';
import { buildCatalogue } from '../core/catalogue.ts';
import type { Plan } from '../core/config.ts';
import { CATALOGUE } from '../tools/index.ts';

const STARTER = ['webhooks', 'smart_views', 'task_snooze'];
// What pro adds to starter, as docs/contracts.md "Plans" writes it.
const PRO_ADDS = 'custom_objects custom_activity_types estimates projects surveys forecasting';
const PRO = [...STARTER, ...PRO_ADDS.split(' ')];
const TABLE: Record<Plan, readonly string[]> = {
  free: [],
  starter: STARTER,
  pro: PRO,
  enterprise: [...PRO, 'call_monitoring'],
};

describe('the plan table', () => {
  it('gives each plan the features of the literal table, and declares no other feature', () => {
    for (const plan of PLANS) {
      expect([...CATALOGUE.plans.plans[plan]].sort(), plan).toEqual([...TABLE[plan]].sort());
    }
    expect([...CATALOGUE.plans.features].sort()).toEqual([...TABLE.enterprise].sort());
    // Checked by the compiler both ways: a feature missing here or one no area declares fails the type check.
    const declared = {
      webhooks: true,
      smart_views: true,
      task_snooze: true,
      custom_objects: true,
      custom_activity_types: true,
      estimates: true,
      projects: true,
      surveys: true,
      forecasting: true,
      call_monitoring: true,
    } as const satisfies Record<keyof FeatureCatalog, true>;
    expect(Object.keys(declared).sort()).toEqual([...CATALOGUE.plans.features].sort());
  });

  it('refuses a feature declared by two areas', () => {
    const area = (name: string) => ({ name, brings: { features: { webhooks: 'starter' as const } } });
    expect(() => buildCatalogue([area('one'), area('two')])).toThrow(
      /Feature webhooks is declared by both one and two/,
    );
  });
});
