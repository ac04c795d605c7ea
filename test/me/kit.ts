// The test kit of tools/me (test/README.md "Test kits"): get_me reads the caller, needs no scope of its own.
import { defineKit } from '../fixtures/kit.ts';

export const kit = defineKit({ area: 'me', bodies: {}, victims: {}, unscopedTools: ['get_me'] });
