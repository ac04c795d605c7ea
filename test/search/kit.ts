// The test kit of tools/search (test/README.md "Test kits"): the global search: reads only, over the other areas' records.
import { defineKit } from '../fixtures/kit.ts';

export const kit = defineKit({ area: 'search', bodies: {}, victims: {} });
