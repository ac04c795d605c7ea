// Locks in the attachment upload of POST /api/v1/files/upload-url on both file stores (the disk store served by the app, S3 on a real s3rver): a signed PUT link under the caller organization's key, usable with schedule_email only by that organization and only with the size actually stored (a presigned S3 PUT cannot bound the size, so the check is the stored object's); roles and scopes of the email family.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLead,
  createTestContext,
  detailFields,
  insertConnectedAccount,
  readError,
  readOutput,
  scheduleBody,
  scheduleEmail,
  type TestAccount,
  type TestContext,
  type TestOrg,
  TOOL,
  uploadAttachment,
} from '../fixtures/index.ts';
import { type S3Peer, startS3Peer } from '../support/s3-peer.ts';

const SMTP = { host: '127.0.0.1', port: 2525, username: 'u', password: 'p' };

let peer: S3Peer;
let disk: TestContext;
let s3: TestContext;

beforeAll(async () => {
  peer = await startS3Peer();
  [disk, s3] = await Promise.all([
    createTestContext({}, { withoutRateLimits: true }),
    createTestContext(peer.env, { withoutRateLimits: true }),
  ]);
});

afterAll(async () => {
  await Promise.all([disk?.close(), s3?.close()]);
  await peer?.stop();
});

describe.each([
  ['disk store', () => disk],
  ['S3 store (s3rver)', () => s3],
])('attachment uploads on the %s', (_name, ctx) => {
  let t: TestContext;
  let org: TestOrg;
  let other: TestOrg;
  let account: TestAccount;
  let leadId: string;

  beforeAll(async () => {
    t = ctx();
    [org, other] = await Promise.all([t.createOrg(), t.createOrg()]);
    account = await insertConnectedAccount(t, { orgId: org.orgId, userId: org.ownerId }, SMTP);
    leadId = (await createLead(t, org, { name: 'Globex' }))._id;
  });

  it('issues a signed PUT link under the organization, and the uploaded file schedules', async () => {
    const file = await uploadAttachment(t, org, { filename: 'Offer 2026.pdf', bytes: '%PDF-1.7 offer' });
    expect(file.storage_key).toMatch(
      new RegExp(`^org/${org.orgId}/attachments/[0-9a-f]{32}/Offer_2026\\.pdf$`),
    );
    expect(await t.services.files.head(file.storage_key)).toEqual({
      size: 14,
      contentType: 'application/pdf',
    });
    const out = await scheduleEmail(t, org, scheduleBody(account.id, leadId, { attachments: [file] }));
    expect(out.job_id).toEqual(expect.any(String));
  });

  it("refuses another organization's upload with a 400 naming attachments.N.storage_key", async () => {
    const theirs = await uploadAttachment(t, other, { filename: 'payroll.pdf', bytes: 'their payroll' });
    const res = await t.request('POST', '/api/v1/email/schedule', {
      token: org.token,
      body: scheduleBody(account.id, leadId, { attachments: [theirs] }),
    });
    expect(detailFields(await readError(res, 400))).toEqual(['attachments.0.storage_key']);
  });

  it('refuses a file whose stored size is not the declared one (more bytes than the link asked for)', async () => {
    const link = await readOutput(
      await t.request('POST', '/api/v1/files/upload-url', {
        token: org.token,
        body: { filename: 'a.txt', mime_type: 'text/plain', size_bytes: 5, purpose: 'attachment' },
      }),
      TOOL.create_upload_url,
    );
    const init = { method: 'PUT', headers: link.headers, body: 'far more than five bytes' };
    const put = link.upload_url.startsWith(t.config.publicBaseUrl)
      ? await t.app.request(link.upload_url, init)
      : await fetch(link.upload_url, init);
    // The disk store refuses the oversized upload itself; a presigned S3 PUT takes it.
    if (t.services.files.kind === 'disk') expect(put.status).toBe(413);
    else expect(put.ok).toBe(true);
    const res = await t.request('POST', '/api/v1/email/schedule', {
      token: org.token,
      body: scheduleBody(account.id, leadId, {
        attachments: [
          { filename: 'a.txt', content_type: 'text/plain', storage_key: link.key, size_bytes: 5 },
        ],
      }),
    });
    expect(detailFields(await readError(res, 400))).toEqual(['attachments.0.storage_key']);
  });
});

describe('access', () => {
  const body = { filename: 'a.pdf', mime_type: 'application/pdf', size_bytes: 5, purpose: 'attachment' };

  it('is for those who may send email: a viewer is 403; a PAT needs write:email', async () => {
    const org = await disk.createOrg();
    const viewer = await disk.createUser(org.orgId, 'viewer');
    const asViewer = await disk.request('POST', '/api/v1/files/upload-url', { token: viewer.token, body });
    expect(asViewer.status).toBe(403);
    const reader = await disk.createPat(org.orgId, org.ownerId, ['read:email']);
    expect(
      (await disk.request('POST', '/api/v1/files/upload-url', { token: reader.token, body })).status,
    ).toBe(403);
    const writer = await disk.createPat(org.orgId, org.ownerId, ['write:email']);
    expect(
      (await disk.request('POST', '/api/v1/files/upload-url', { token: writer.token, body })).status,
    ).toBe(200);
  });
});
