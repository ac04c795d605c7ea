// Locks in that every area declares what it uses: permissions some role holds, events of the
// catalogue, routes to registered tools, described OpenAPI tags, known toolsets, and that every
// folder under tools/ is a listed area. A forgotten declaration fails here, not in production.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ROLES } from '../core/access.ts';
import { defineArea } from '../core/area.ts';
import { buildCatalogue } from '../core/catalogue.ts';
import type { EventCatalog } from '../core/events.ts';
import { route } from '../core/route.ts';
import { tagOf } from '../rest/openapi.ts';
import {
  AREAS,
  CATALOGUE,
  KITS,
  RESERVED,
  ROUTES,
  STATE_MACHINES,
  TAG_DESCRIPTIONS,
  TOOLS,
} from '../tools/index.ts';

const TOOLS_DIR = fileURLToPath(new URL('../tools/', import.meta.url));

/** The source text of every file of an area folder. */
function sourceOf(area: string): string {
  return readdirSync(join(TOOLS_DIR, area), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'))
    .join('\n');
}

const TOOLSET_NAMES = CATALOGUE.toolsetNames;
const heldByARole = new Set(ROLES.flatMap((role) => [...CATALOGUE.access.roles[role]]));

describe('area declarations', () => {
  it('lists every folder under tools/ as an area, once, under its folder name', () => {
    const folders = readdirSync(TOOLS_DIR, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !KITS.includes(e.name))
      .map((e) => e.name)
      .sort();
    expect(AREAS.map((a) => a.name).sort()).toEqual(folders);
  });

  it('registers each tool and each METHOD path once', () => {
    const names = TOOLS.map((t) => t.name);
    expect(names.length).toBe(new Set(names).size);
    const routes = ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(routes.length).toBe(new Set(routes).size);
  });

  for (const area of AREAS) {
    describe(area.name, () => {
      const source = sourceOf(area.name);

      it('declares only permissions some role holds, and every permission its code checks', () => {
        for (const permission of area.permissions) expect(heldByARole, permission).toContain(permission);
        const used = CATALOGUE.access.permissions.filter((p) => source.includes(`'${p}'`));
        for (const permission of used)
          expect(area.permissions, `${permission} is used in tools/${area.name}`).toContain(permission);
      });

      it('declares only events of the catalogue, and every event its code emits', () => {
        for (const event of area.events) expect(CATALOGUE.eventNames).toContain(event);
        const emitted = [...source.matchAll(/emit\(\s*'([a-z_.]+)'/g)].map((m) => m[1]);
        for (const event of emitted)
          expect(area.events, `tools/${area.name} emits ${event}`).toContain(event);
        const moves = (area.stateMachines ?? []).flatMap((machine) =>
          machine.states.flatMap((from) =>
            machine.states.map((to) => (from === to ? null : safeEvent(machine, from, to))),
          ),
        );
        for (const event of moves) if (event) expect(area.events, `a move emits ${event}`).toContain(event);
      });

      it('routes only to registered tools, under described tags it introduces or shares', () => {
        for (const r of area.routes) {
          expect(TOOLS, `${r.method} ${r.path}`).toContain(r.tool);
          expect(TAG_DESCRIPTIONS[tagOf(r.path)], `tag of ${r.path}`).toEqual(expect.any(String));
        }
        for (const [tag, description] of Object.entries(area.tags)) {
          expect(description.trim().length, `description of ${tag}`).toBeGreaterThan(10);
          expect(
            area.routes.map((r) => tagOf(r.path)),
            `tag ${tag} is used by the area's routes`,
          ).toContain(tag);
        }
      });

      it('puts its tools in toolsets it declares, each a known toolset', () => {
        for (const name of area.toolsets) expect(TOOLSET_NAMES).toContain(name);
        for (const tool of area.tools) expect(area.toolsets, tool.name).toContain(tool.toolset);
      });
    });
  }

  it('introduces each OpenAPI tag in one area only', () => {
    const tags = AREAS.flatMap((a) => Object.keys(a.tags));
    expect(tags.length).toBe(new Set(tags).size);
  });

  it('leaves no toolset without tools', () => {
    for (const name of TOOLSET_NAMES)
      expect(
        TOOLS.some((t) => t.toolset === name),
        name,
      ).toBe(true);
  });

  it('collects the scope families: the specification’s scoped resources, then those areas introduce', () => {
    const locked: string[] = [
      ...['leads', 'contacts', 'opportunities', 'invoices', 'proposals', 'projects'],
      ...['users', 'webhooks', 'settings', 'custom_objects', 'email'],
    ];
    // An area added later (npm run scaffold:area) adds its own, declared in its catalogue.
    const later = AREAS.flatMap((area) => Object.keys(area.brings?.scopes ?? {})).filter(
      (f) => !locked.includes(f),
    );
    expect([...CATALOGUE.scopeFamilies].sort()).toEqual([...locked, ...later].sort());
    // Each family says what it covers in plain words, for a person choosing scopes (the OAuth consent page).
    for (const family of CATALOGUE.scopeFamilies) {
      expect(CATALOGUE.scopeLabels.get(family), family).toMatch(/\S/);
    }
    expect(CATALOGUE.knownScopes).toContain('write:custom_objects');
    expect(CATALOGUE.knownScopes).toContain('mcp:read');
  });

  it('refuses a scope family declared twice, or one of the kernel’s scoped resources', () => {
    const area = (name: string, families: string[]) => ({
      name,
      brings: { scopes: Object.fromEntries(families.map((family) => [family, family])) },
    });
    expect(() => buildCatalogue([area('one', ['users']), area('two', ['users'])])).toThrow(
      /declared by both one and two/,
    );
    expect(() => buildCatalogue([area('one', ['leads'])])).toThrow(/declared by both the kernel and one/);
  });

  it('builds its catalogue from every area, the API keys and webhooks areas included, then the reserved names', () => {
    expect(buildCatalogue([...AREAS, RESERVED])).toEqual(CATALOGUE);
    const locked: string[] = [
      'core',
      'sales',
      'views',
      'customization',
      'admin',
      'settings',
      'webhooks',
      'billing',
      'projects',
      'email',
    ];
    // An area added later (npm run scaffold:area) adds its own, declared in its catalogue.
    const later = AREAS.flatMap((area) => Object.keys(area.brings?.toolsets ?? {})).filter(
      (name) => !locked.includes(name),
    );
    expect([...CATALOGUE.toolsetNames].sort()).toEqual([...locked, ...later].sort());
  });

  it('collects the payload schema of each declared event, owned by an area that emits it; the compile-time catalogue is the runtime one', () => {
    // Checked by the compiler both ways: a key missing here or one no area declares fails the type check.
    const declared = {
      'lead.created': true,
      'lead.updated': true,
      'lead.deleted': true,
      'lead.status_changed': true,
      'contact.created': true,
      'contact.updated': true,
      'contact.deleted': true,
      'opportunity.created': true,
      'opportunity.updated': true,
      'opportunity.won': true,
      'opportunity.lost': true,
      'task.created': true,
      'task.completed': true,
      'activity.created': true,
      'call.completed': true,
      'invoice.created': true,
      'invoice.sent': true,
      'invoice.paid': true,
      'invoice.overdue': true,
      'proposal.sent': true,
      'proposal.accepted': true,
      'proposal.declined': true,
      'contract.signed': true,
      'email.sent': true,
      'email.received': true,
      'workflow.triggered': true,
      'webhook.test': true,
      // The specification's, for areas not built yet (tools/reserved.ts).
      'sms.received': true,
      'sms.sent': true,
      'form.submitted': true,
    } as const satisfies Record<keyof EventCatalog, true>;
    expect([...CATALOGUE.eventSchemas.keys()].sort()).toEqual(Object.keys(declared).sort());
    for (const area of AREAS) {
      for (const event of Object.keys(area.brings?.events ?? {})) {
        expect(area.events, `${area.name} declares the payload of ${event}`).toContain(event);
      }
    }
    const schema = z.looseObject({ _id: z.string().describe('Id') });
    const bringing = (name: string) => ({ name, brings: { events: { 'lead.created': schema } } });
    expect(() => buildCatalogue([bringing('one'), bringing('two')])).toThrow(
      /Event lead.created is declared by both one and two/,
    );
  });

  it('derives the state machines from the areas', () => {
    // Every machine an area declares, once; the ones below must not go missing (a new area adds its own).
    const declared = AREAS.flatMap((area) => area.stateMachines ?? []).map((m) => m.resource);
    expect(STATE_MACHINES.map((m) => m.resource).sort()).toEqual([...declared].sort());
    expect(new Set(declared).size).toBe(declared.length);
    expect(declared).toEqual(
      expect.arrayContaining([
        'estimate',
        'invoice',
        'opportunity',
        'project',
        'proposal',
        'scheduled email',
        'task',
        'workflow',
      ]),
    );
  });

  it('refuses, when an area is defined, a route to another area tool or an undeclared permission or toolset', () => {
    const tool = TOOLS.find((t) => t.name === 'list_leads');
    if (!tool) throw new Error('list_leads is not registered');
    const base = { name: 'sample', tags: {}, events: [], toolsets: ['core' as const] };
    expect(() =>
      defineArea({
        ...base,
        tools: [],
        routes: [route('GET', '/sample', tool)],
        permissions: [],
        toolsets: [],
      }),
    ).toThrow(/not one of its tools/);
    expect(() => defineArea({ ...base, tools: [tool], routes: [], permissions: [] })).toThrow(
      /does not declare/,
    );
    expect(() =>
      defineArea({ ...base, tools: [tool], routes: [], permissions: ['leads.view'], toolsets: [] }),
    ).toThrow(/toolset/);
  });
});

/** The event of a move, or null when the move is not allowed. */
function safeEvent(machine: (typeof STATE_MACHINES)[number], from: string, to: string): string | null {
  try {
    return machine.eventOf(from, to);
  } catch {
    return null;
  }
}
