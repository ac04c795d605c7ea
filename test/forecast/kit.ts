// The test kit of tools/forecast (test/README.md "Test kits"): forecast accuracy: reads only.
import { defineKit } from '../fixtures/kit.ts';

export const kit = defineKit({ area: 'forecast', bodies: {}, victims: {} });
