// The test kit of tools/avatars (test/README.md "Test kits"): the two steps of an avatar upload, no record addressed by id.
import { defineKit } from '../fixtures/kit.ts';

const target = { target_type: 'user', target_id: '' };

export const kit = defineKit({
  area: 'avatars',
  bodies: {
    create_avatar_upload_url: {
      body: { filename: 'me.png', mime_type: 'image/png', size_bytes: 10, ...target },
      text: 'filename',
    },
    confirm_avatar_upload: { body: { key: 'org/x/avatars/none.png', ...target }, text: 'key' },
    remove_avatar: { body: target, text: 'target_type' },
  },
  victims: {},
  fuzz: {
    // A `target_id` is drawn from the `targets` pool: the owner's own user and organization, the
    // targets the owner may set, so valid requests get through.
    seed: async ({ t, token, collect }) => {
      const me = await t.request('GET', '/api/v1/me', { token });
      collect('/api/v1/targets', await me.json());
    },
  },
});
