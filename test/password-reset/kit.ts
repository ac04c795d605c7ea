// The test kit of tools/password-reset (test/README.md "Test kits"): the area has no tools and no
// route of the route table, only public routes; the two under /api/v1 bring their bodies for
// test/input-rules.test.ts. Their behaviour is test/password-reset/.
import { defineKit } from '../fixtures/kit.ts';

export const kit = defineKit({
  area: 'password-reset',
  bodies: {},
  victims: {},
  publicBodies: {
    'POST /api/v1/auth/password-reset': { body: { email: 'ann@example.test' }, text: 'email' },
    'POST /api/v1/auth/password-reset/confirm': {
      body: { token: 't'.repeat(43), password: 'a long enough secret' },
      text: 'token',
    },
  },
});
