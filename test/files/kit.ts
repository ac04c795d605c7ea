// The test kit of tools/files (test/README.md "Test kits"): an upload URL, no record addressed by id.
import { defineKit } from '../fixtures/kit.ts';

export const kit = defineKit({
  area: 'files',
  bodies: {
    create_upload_url: {
      body: { filename: 'offer.pdf', mime_type: 'application/pdf', size_bytes: 10, purpose: 'attachment' },
      text: 'filename',
    },
  },
  victims: {},
});
