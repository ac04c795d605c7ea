// Locks in the route-table rules every record resource shares: a path that answers PATCH also answers
// PUT, with the same (merging) tool unless the resource documents a real replace (a replace_ tool),
// so a resource added later cannot forget it.
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../tools/index.ts';

describe('the REST route table', () => {
  const patches = ROUTES.filter((r) => r.method === 'PATCH');

  it('has PATCH routes to check', () => {
    expect(patches.length).toBeGreaterThan(5);
  });

  it.each(patches.map((r) => [r.path, r]))('PATCH %s has a PUT twin', (_path, patch) => {
    const put = ROUTES.find((r) => r.method === 'PUT' && r.path === patch.path);
    expect(put, `PUT ${patch.path}`).toBeDefined();
    if (put && put.tool !== patch.tool) expect(put.tool.name).toMatch(/^replace_/);
  });
});
