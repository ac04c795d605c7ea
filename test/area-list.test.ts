// The builder of the one area list (core/area-list.ts): factories see every other area's entries in
// list order, are built before the areas that ask for what they provide, and are refused when they
// add to a registry they did not name or need themselves; and toolMap, the built list's tools by name.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Area, defineArea, type LeadConvertedHook, toolMap } from '../core/area.ts';
import { type AreaEntry, buildAreaList } from '../core/area-list.ts';
import { defineTool } from '../core/tool.ts';
import { TOOL_BY_NAME, TOOLS } from '../tools/index.ts';

const hook: LeadConvertedHook = async () => {};
const plain = (name: string, extra: Partial<Area> = {}): Area =>
  defineArea({ name, tools: [], routes: [], tags: {}, permissions: [], events: [], toolsets: [], ...extra });

describe('buildAreaList', () => {
  it('builds in list order, a factory seeing the other entries of a registry in list order', () => {
    const seen: string[] = [];
    const entries: AreaEntry[] = [
      plain('first', { leadConverted: [hook] }),
      {
        name: 'asker',
        provides: [],
        build: (list) => {
          seen.push(`asker saw ${list.collect('leadConverted').length}`);
          return plain('asker');
        },
      },
      {
        name: 'later',
        provides: ['leadConverted'],
        build: () => {
          seen.push('later built');
          return plain('later', { leadConverted: [hook, hook] });
        },
      },
    ];
    const { areas } = buildAreaList(entries);
    expect(areas.map((a) => a.name)).toEqual(['first', 'asker', 'later']);
    // The provider after the asker in the list is built first, for the asker's question.
    expect(seen).toEqual(['later built', 'asker saw 3']);
  });

  it('refuses a factory adding to a registry it did not name in provides', () => {
    const entries: AreaEntry[] = [
      { name: 'sly', provides: [], build: () => plain('sly', { leadConverted: [hook] }) },
    ];
    expect(() => buildAreaList(entries)).toThrow(/adds to leadConverted/);
  });

  it('refuses a factory that needs itself', () => {
    const entries: AreaEntry[] = [
      {
        name: 'a',
        provides: ['leadConverted'],
        build: (list) => plain('a', { ownedRecords: list.collect('ownedRecords') }),
      },
      {
        name: 'b',
        provides: ['ownedRecords'],
        build: (list) => plain('b', { leadConverted: list.collect('leadConverted') }),
      },
    ];
    expect(() => buildAreaList(entries)).toThrow(/needed to build itself/);
  });
});

describe('toolMap', () => {
  const probe = (name: string) =>
    defineTool({
      name,
      title: 'Probe',
      description: 'A probe tool that only the area list test declares.',
      input: z.strictObject({}),
      output: z.strictObject({}),
      access: { kind: 'read', resource: null, permission: null },
      handler: async () => ({}),
    });
  const withTools = (name: string, tools: ReturnType<typeof probe>[]) =>
    defineArea({ name, tools, routes: [], tags: {}, permissions: [], events: [], toolsets: ['core'] });

  it('keys every tool of the areas by its name', () => {
    const one = probe('get_one');
    const two = probe('get_two');
    const map = toolMap([withTools('first', [one]), withTools('second', [two])]);
    expect(Object.entries(map)).toEqual([
      ['get_one', one],
      ['get_two', two],
    ]);
  });

  it('refuses a name declared twice', () => {
    expect(() =>
      toolMap([withTools('first', [probe('get_one')]), withTools('second', [probe('get_one')])]),
    ).toThrow(/get_one is declared twice/);
  });

  it("is, for the registry, the very tools it serves, in its order (the fixtures' TOOL)", () => {
    const values: unknown[] = Object.values(TOOL_BY_NAME);
    expect(values).toHaveLength(TOOLS.length);
    for (const [i, tool] of TOOLS.entries()) expect(values[i]).toBe(tool);
  });
});
