// The test kit of tools/telephony (test/README.md "Test kits"), and the fixture of a file whose
// context reaches a Twilio-compatible peer (test/support/twilio-peer.ts) through TWILIO_API_BASE_URL,
// with `connectTelephony` saving the peer's account for an organization as an admin would.
import { expect } from 'vitest';
import { createTestContext, type TestContext, type TestOrg } from '../fixtures/context.ts';
import { type FileTestSetup, fileTest } from '../fixtures/file-test.ts';
import { defineKit, NO_BODY } from '../fixtures/kit.ts';
import { startTwilioPeer, type TwilioPeer, type TwilioPeerOptions } from '../support/twilio-peer.ts';

export const kit = defineKit({
  area: 'telephony',
  bodies: {
    // Parses; against a context without a peer the provider check then answers 502.
    update_telephony_settings: {
      body: { account_sid: `AC${'0'.repeat(32)}`, auth_token: '0'.repeat(32) },
      text: 'account_sid',
    },
    delete_telephony_settings: NO_BODY,
  },
  victims: {},
});

/** A `test` with fileTest's fixtures plus `peer`, the Twilio peer the context `t` calls. */
export function telephonyTest(setup: FileTestSetup & { peer?: TwilioPeerOptions } = {}) {
  const test = fileTest(setup)
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; the peer has none.
    .extend('peer', { scope: 'file' }, async ({}, { onCleanup }) => {
      const peer = await startTwilioPeer(setup.peer);
      onCleanup(() => peer.close());
      return peer;
    });
  test.override('t', { scope: 'file' }, async ({ peer }, { onCleanup }) => {
    const t = await createTestContext({ ...setup.env, TWILIO_API_BASE_URL: peer.url }, setup.options);
    onCleanup(() => t.close());
    return t;
  });
  return test;
}

/** Saves the peer's account as `org`'s telephony settings through the route (its owner calling). */
export async function connectTelephony(t: TestContext, org: TestOrg, peer: TwilioPeer): Promise<void> {
  const res = await t.request('PUT', '/api/v1/settings/telephony', {
    token: org.token,
    body: { account_sid: peer.accountSid, auth_token: peer.authToken },
  });
  expect(res.status, await res.clone().text()).toBe(200);
}
