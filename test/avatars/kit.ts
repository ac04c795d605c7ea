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
  },
  victims: {},
});
