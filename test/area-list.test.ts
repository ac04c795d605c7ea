// The builder of the one area list (core/area-list.ts): factories see every other area's entries in
// list order, are built before the areas that ask for what they provide, and are refused when they
// add to a registry they did not name or need themselves.
import { describe, expect, it } from 'vitest';
import { type Area, defineArea, type LeadConvertedHook } from '../core/area.ts';
import { type AreaEntry, buildAreaList } from '../core/area-list.ts';

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
