// The test kit of tools/password-reset (test/README.md "Test kits"): the area has no tools and no
// route of the route table, only public routes (test/password-reset/), so the central suites have
// nothing of it to cover.
import { defineKit } from '../fixtures/kit.ts';

export const kit = defineKit({
  area: 'password-reset',
  bodies: {},
  victims: {},
});
