// The test kit of tools/lead-health (test/README.md "Test kits"): a lead's health score: reads only, no records of its own.
import { defineKit } from '../fixtures/kit.ts';

export const kit = defineKit({ area: 'lead-health', bodies: {}, victims: {} });
