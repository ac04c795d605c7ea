// Locks in POST /api/v1/email/schedule and the scheduled-email routes: every bound of the specification's table is a 400 naming its field (both sides of each limit), references are the caller's own account, a live lead, a contact of that lead and a workflow of the organization (400 naming the field otherwise, another organization's too), 200 {message, job_id, scheduled_at} writes a scheduled row; list/get visibility (members their own, managers and up the organization's), cancel only while scheduled; roles and PAT scopes; and the MCP tool previews without confirm and writes nothing.
import { eq } from 'drizzle-orm';
import { describe, expect, vi } from 'vitest';
import { newId } from '../../core/ids.ts';
import { scheduledEmails } from '../../tools/email/tables.ts';
import {
  createContact,
  createLead,
  detailFields,
  fileTest,
  insertConnectedAccount,
  minutesFromNow,
  readError,
  readOutput,
  scheduleBody,
  scheduledEmailRow,
  scheduleEmail,
  type TestAccount,
  type TestContext,
  type TestOrg,
  TOOL,
  uploadAttachment,
} from '../fixtures/index.ts';
import { bearer, ERAS, serveMcp } from '../mcp-clients.ts';
import { seedWorkflows } from '../workflows/seed.ts';

let account: TestAccount;
let leadId: string;
let contactId: string;

const SMTP = { host: '127.0.0.1', port: 2525, username: 'u', password: 'p' };

const test = fileTest({ options: { withoutRateLimits: true } });

test.beforeAll(async ({ t, org }) => {
  account = await insertConnectedAccount(t, { orgId: org.orgId, userId: org.ownerId }, SMTP);
  const lead = await createLead(t, org, { name: 'Globex' });
  leadId = lead._id;
  contactId = (await createContact(t, org, { lead_id: leadId, name: 'Hank' }))._id;
});

const post = (t: TestContext, org: TestOrg, body: unknown, token = org.token) =>
  t.request('POST', '/api/v1/email/schedule', { token, body });

async function expect400(t: TestContext, org: TestOrg, body: unknown, field: string): Promise<void> {
  const res = await post(t, org, body);
  const error = await readError(res, 400);
  expect(detailFields(error)).toContain(field);
}

describe('POST /email/schedule bounds', () => {
  const base = () => scheduleBody(account.id, leadId);
  const attachment = {
    filename: 'a.pdf',
    content_type: 'application/pdf',
    storage_key: 'org/a.pdf',
    size_bytes: 10,
  };
  const emails = (n: number) => Array.from({ length: n }, (_, i) => `cc${i}@globex.example`);

  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['to missing', { to: undefined }, 'to'],
    ['to not an email', { to: 'not-an-email' }, 'to'],
    ['cc 21 items', { cc: emails(21) }, 'cc'],
    ['cc not emails', { cc: ['x'] }, 'cc.0'],
    ['bcc 21 items', { bcc: emails(21) }, 'bcc'],
    ['subject empty', { subject: '' }, 'subject'],
    ['subject 501', { subject: 'x'.repeat(501) }, 'subject'],
    ['body_html empty', { body_html: '' }, 'body_html'],
    ['body_html missing', { body_html: undefined }, 'body_html'],
    ['connected_account_id not an id', { connected_account_id: 'abc' }, 'connected_account_id'],
    ['lead_id not an id', { lead_id: 'xyz' }, 'lead_id'],
    ['contact_id not an id', { contact_id: '123' }, 'contact_id'],
    ['template_id not an id', { template_id: 'nope' }, 'template_id'],
    ['enroll_in_workflow_id not an id', { enroll_in_workflow_id: 'nope' }, 'enroll_in_workflow_id'],
    ['11 attachments', { attachments: Array.from({ length: 11 }, () => attachment) }, 'attachments'],
    ['filename empty', { attachments: [{ ...attachment, filename: '' }] }, 'attachments.0.filename'],
    [
      'filename 256',
      { attachments: [{ ...attachment, filename: 'f'.repeat(256) }] },
      'attachments.0.filename',
    ],
    [
      'content_type empty',
      { attachments: [{ ...attachment, content_type: '' }] },
      'attachments.0.content_type',
    ],
    [
      'content_type 101',
      { attachments: [{ ...attachment, content_type: 'a'.repeat(101) }] },
      'attachments.0.content_type',
    ],
    ['storage_key empty', { attachments: [{ ...attachment, storage_key: '' }] }, 'attachments.0.storage_key'],
    [
      'storage_key 501',
      { attachments: [{ ...attachment, storage_key: `${'k/'.repeat(250)}k` }] },
      'attachments.0.storage_key',
    ],
    [
      'storage_key ..',
      { attachments: [{ ...attachment, storage_key: 'org/../secret' }] },
      'attachments.0.storage_key',
    ],
    [
      'storage_key leading /',
      { attachments: [{ ...attachment, storage_key: '/etc/passwd' }] },
      'attachments.0.storage_key',
    ],
    ['size_bytes 0', { attachments: [{ ...attachment, size_bytes: 0 }] }, 'attachments.0.size_bytes'],
    [
      'size_bytes 26214401',
      { attachments: [{ ...attachment, size_bytes: 26_214_401 }] },
      'attachments.0.size_bytes',
    ],
    [
      'size_bytes not integer',
      { attachments: [{ ...attachment, size_bytes: 1.5 }] },
      'attachments.0.size_bytes',
    ],
    ['scheduled_at not a date-time', { scheduled_at: 'tomorrow' }, 'scheduled_at'],
    [
      'scheduled_at 30 seconds ahead',
      { scheduled_at: new Date(Date.now() + 30_000).toISOString() },
      'scheduled_at',
    ],
    ['scheduled_at in the past', { scheduled_at: minutesFromNow(-5) }, 'scheduled_at'],
    ['scheduled_at 31 days ahead', { scheduled_at: minutesFromNow(31 * 1440) }, 'scheduled_at'],
    ['follow_up.amount 0', { follow_up: { amount: 0, unit: 'days' } }, 'follow_up.amount'],
    ['follow_up.amount 91', { follow_up: { amount: 91, unit: 'days' } }, 'follow_up.amount'],
    ['follow_up.amount 1.5', { follow_up: { amount: 1.5, unit: 'days' } }, 'follow_up.amount'],
    ['follow_up.amount missing', { follow_up: { unit: 'days' } }, 'follow_up.amount'],
    ['follow_up.unit weeks', { follow_up: { amount: 2, unit: 'weeks' } }, 'follow_up.unit'],
    ['follow_up.unit missing', { follow_up: { amount: 2 } }, 'follow_up.unit'],
  ];

  test.for(refused)('refuses %s with a 400 naming the field', async ([_name, change, field], { t, org }) => {
    await expect400(t, org, { ...base(), ...change }, field);
  });

  test('accepts every limit at its edge: 20 cc and bcc, 500-character subject, 10 attachments of 1 and 26214400 bytes, follow_up 1 and 90', async ({
    t,
    org,
  }) => {
    const small = await Promise.all(
      Array.from({ length: 9 }, () => uploadAttachment(t, org, { filename: 'f'.repeat(255), bytes: 'x' })),
    );
    const largest = await uploadAttachment(t, org, {
      contentType: `application/${'a'.repeat(88)}`,
      bytes: new Uint8Array(26_214_400),
    });
    const body = {
      ...base(),
      cc: emails(20),
      bcc: emails(20),
      subject: 's'.repeat(500),
      body_html: 'x',
      contact_id: contactId,
      template_id: newId(),
      attachments: [...small, largest],
      follow_up: { amount: 90, unit: 'hours' as const },
    };
    expect(largest.content_type).toHaveLength(100);
    const out = await scheduleEmail(t, org, body);
    const row = await scheduledEmailRow(t, out.job_id);
    expect(row.attachments).toHaveLength(10);
    expect(row.templateId).toBe(body.template_id);
    expect(row.followUp).toEqual({ amount: 90, unit: 'hours' });
    await scheduleEmail(t, org, {
      ...base(),
      attachments: [small[0] ?? largest],
      follow_up: { amount: 1, unit: 'days' },
    });
  });

  test('accepts scheduled_at just over 1 minute and just under 30 days ahead', async ({ t, org }) => {
    await scheduleEmail(t, org, { ...base(), scheduled_at: new Date(Date.now() + 65_000).toISOString() });
    await scheduleEmail(t, org, { ...base(), scheduled_at: minutesFromNow(30 * 1440 - 1) });
  });
});

describe('POST /email/schedule header fields', () => {
  const base = () => scheduleBody(account.id, leadId);

  test.for<[string, Record<string, unknown>, string]>([
    ['a CR/LF in the subject', { subject: 'Hello\r\nBcc: victim@example.com' }, 'subject'],
    ['a LF in the subject', { subject: 'Hello\nthere' }, 'subject'],
  ])('refuses %s with a 400 naming the field', async ([_name, change, field], { t, org }) => {
    await expect400(t, org, { ...base(), ...change }, field);
  });

  test('refuses a CR or LF in an attachment file name or content type with a 400 naming the field', async ({
    t,
    org,
  }) => {
    const file = await uploadAttachment(t, org);
    await expect400(
      t,
      org,
      { ...base(), attachments: [{ ...file, filename: 'a\r\nb.pdf' }] },
      'attachments.0.filename',
    );
    await expect400(
      t,
      org,
      { ...base(), attachments: [{ ...file, content_type: 'text/plain\r\nX-Evil: 1' }] },
      'attachments.0.content_type',
    );
    await expect400(
      t,
      org,
      { ...base(), attachments: [{ ...file, content_type: 'not a type' }] },
      'attachments.0.content_type',
    );
  });

  test('accepts a content type with parameters (text/html; charset=utf-8)', async ({ t, org }) => {
    const file = await uploadAttachment(t, org, {
      filename: 'page.html',
      contentType: 'text/html; charset=utf-8',
    });
    const out = await scheduleEmail(t, org, { ...base(), attachments: [file] });
    expect((await scheduledEmailRow(t, out.job_id)).attachments[0]?.content_type).toBe(
      'text/html; charset=utf-8',
    );
  });
});

describe('POST /email/schedule attachments', () => {
  const base = () => scheduleBody(account.id, leadId);

  test("refuses another organization's uploaded file with a 400 naming attachments.N.storage_key", async ({
    t,
    org,
    other,
  }) => {
    const theirs = await uploadAttachment(t, other, { filename: 'secret.pdf', bytes: 'their secret' });
    const mine = await uploadAttachment(t, org);
    await expect400(t, org, { ...base(), attachments: [mine, theirs] }, 'attachments.1.storage_key');
    const res = await post(t, org, { ...base(), attachments: [mine, theirs] });
    expect(detailFields(await readError(res, 400))).toEqual(['attachments.1.storage_key']);
  });

  test('refuses a key of the organization that holds no file, or a file of another size than declared', async ({
    t,
    org,
  }) => {
    const mine = await uploadAttachment(t, org);
    const missing = mine.storage_key.replace(/\/[0-9a-f]{32}\//, `/${'0'.repeat(32)}/`);
    await expect400(
      t,
      org,
      { ...base(), attachments: [{ ...mine, storage_key: missing }] },
      'attachments.0.storage_key',
    );
    await expect400(
      t,
      org,
      { ...base(), attachments: [{ ...mine, size_bytes: mine.size_bytes + 1 }] },
      'attachments.0.storage_key',
    );
    // Fewer bytes uploaded than the link was asked for: the object's size decides, not the declaration.
    const short = await uploadAttachment(t, org, { bytes: 'abc', declare: 10 });
    await expect400(
      t,
      org,
      { ...base(), attachments: [{ ...short, size_bytes: 10 }] },
      'attachments.0.storage_key',
    );
    await scheduleEmail(t, org, { ...base(), attachments: [short] });
  });

  test('refuses keys outside the attachment uploads of the organization, whatever their shape', async ({
    t,
    org,
    other,
  }) => {
    const mine = await uploadAttachment(t, org);
    const prefix = `org/${org.orgId}/`;
    for (const key of [
      `${prefix}other/${'a'.repeat(32)}/x.pdf`,
      `org/${other.orgId}/attachments/${'a'.repeat(32)}/x.pdf`,
      'invoices/x.pdf',
    ]) {
      await expect400(
        t,
        org,
        { ...base(), attachments: [{ ...mine, storage_key: key }] },
        'attachments.0.storage_key',
      );
    }
  });

  test('issues upload links only under the caller organization, as a 400 for a bad request', async ({
    t,
    org,
  }) => {
    const link = await readOutput(
      await t.request('POST', '/api/v1/files/upload-url', {
        token: org.token,
        body: {
          filename: '../../etc/passwd',
          mime_type: 'application/pdf',
          size_bytes: 5,
          purpose: 'attachment',
        },
      }),
      TOOL.create_upload_url,
    );
    expect(link.key).toMatch(new RegExp(`^org/${org.orgId}/attachments/[0-9a-f]{32}/_.._.._etc_passwd$`));
    expect(link).toMatchObject({ method: 'PUT', headers: { 'content-type': 'application/pdf' } });
    for (const body of [
      { filename: 'a.pdf', mime_type: 'application/pdf', size_bytes: 5, purpose: 'avatar' },
      { filename: 'a.pdf', mime_type: 'application/pdf', size_bytes: 26_214_401, purpose: 'attachment' },
      { filename: 'a\n.pdf', mime_type: 'application/pdf', size_bytes: 5, purpose: 'attachment' },
      { filename: 'a.pdf', mime_type: 'pdf', size_bytes: 5, purpose: 'attachment' },
    ]) {
      const res = await t.request('POST', '/api/v1/files/upload-url', { token: org.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  test('refuses an account that is not verified with a 400 naming connected_account_id', async ({
    t,
    org,
  }) => {
    for (const status of ['unverified', 'error']) {
      const unverified = await insertConnectedAccount(t, { orgId: org.orgId, userId: org.ownerId }, SMTP, {
        status,
      });
      const res = await post(t, org, scheduleBody(unverified.id, leadId));
      const error = await readError(res, 400);
      expect(error.details).toEqual([
        expect.objectContaining({ field: 'connected_account_id', code: 'unverified_account' }),
      ]);
    }
  });
});

describe('POST /email/schedule references', () => {
  test('answers 200 {message, job_id, scheduled_at} and writes a scheduled row due at its time', async ({
    t,
    org,
  }) => {
    const at = minutesFromNow(10);
    const out = await scheduleEmail(
      t,
      org,
      scheduleBody(account.id, leadId, { scheduled_at: at, contact_id: contactId }),
    );
    expect(out).toEqual({ sent: true, message: 'Email scheduled', job_id: out.job_id, scheduled_at: at });
    const row = await scheduledEmailRow(t, out.job_id);
    expect(row).toMatchObject({
      status: 'scheduled',
      attempts: 0,
      userId: org.ownerId,
      connectedAccountId: account.id,
      leadId,
      contactId,
      toAddress: 'hank@globex.example',
    });
    expect(row.nextAttemptAt?.toISOString()).toBe(at);
  });

  test("refuses another user's account, another organization's account, lead, contact and workflow with a 400 naming the field", async ({
    t,
    org,
    other,
  }) => {
    const member = await t.createUser(org.orgId, 'member');
    // The owner's account is not the member's to send through.
    const res = await post(t, org, scheduleBody(account.id, leadId), member.token);
    expect(detailFields(await readError(res, 400))).toEqual(['connected_account_id']);

    const theirAccount = await insertConnectedAccount(t, { orgId: other.orgId, userId: other.ownerId }, SMTP);
    const theirLead = await createLead(t, other, { name: 'Theirs' });
    const theirContact = await createContact(t, other, { lead_id: theirLead._id });
    await expect400(t, org, scheduleBody(theirAccount.id, leadId), 'connected_account_id');
    await expect400(t, org, scheduleBody(account.id, theirLead._id), 'lead_id');
    await expect400(t, org, scheduleBody(account.id, leadId, { contact_id: theirContact._id }), 'contact_id');
    // A contact of another lead of the same organization.
    const otherLead = await createLead(t, org, { name: 'Initech' });
    const otherContact = await createContact(t, org, { lead_id: otherLead._id });
    await expect400(t, org, scheduleBody(account.id, leadId, { contact_id: otherContact._id }), 'contact_id');
    await expect400(
      t,
      org,
      scheduleBody(account.id, leadId, { enroll_in_workflow_id: newId() }),
      'enroll_in_workflow_id',
    );
    const [theirWorkflow = ''] = await seedWorkflows(t, other.orgId, [{ name: 'W', steps: [] }]);
    await expect400(
      t,
      org,
      scheduleBody(account.id, leadId, { enroll_in_workflow_id: theirWorkflow }),
      'enroll_in_workflow_id',
    );
    // A trashed lead is not live.
    const trashed = await createLead(t, org, { name: 'Trashed' });
    expect((await t.request('DELETE', `/api/v1/leads/${trashed._id}`, { token: org.token })).status).toBe(
      200,
    );
    await expect400(t, org, scheduleBody(account.id, trashed._id), 'lead_id');
    const rows = await t.services.db.system
      .select()
      .from(scheduledEmails)
      .where(eq(scheduledEmails.orgId, other.orgId));
    expect(rows).toHaveLength(0);
  });

  test('wakes its job delayed until its time, 29 days ahead too', async ({ t, org }) => {
    const enqueue = vi.spyOn(t.services.jobs, 'enqueue');
    try {
      const soon = await scheduleEmail(
        t,
        org,
        scheduleBody(account.id, leadId, { scheduled_at: minutesFromNow(10) }),
      );
      expect(enqueue).toHaveBeenCalledTimes(1);
      const [name, payload, options] = enqueue.mock.calls[0] ?? [];
      expect([name, payload]).toEqual(['email.send', { id: soon.job_id }]);
      expect(options?.jobId).toBe(soon.job_id);
      expect(options?.delayMs).toBeGreaterThan(9 * 60_000);
      expect(options?.delayMs).toBeLessThanOrEqual(10 * 60_000);
      const far = await scheduleEmail(
        t,
        org,
        scheduleBody(account.id, leadId, { scheduled_at: minutesFromNow(29 * 1440) }),
      );
      expect(enqueue).toHaveBeenCalledTimes(2);
      const [, farPayload, farOptions] = enqueue.mock.calls[1] ?? [];
      expect(farPayload).toEqual({ id: far.job_id });
      expect(farOptions?.delayMs).toBeGreaterThan(29 * 1440 * 60_000 - 60_000);
    } finally {
      enqueue.mockRestore();
    }
  });

  test('accepts a paused workflow of the organization (it must be active when the mail is sent)', async ({
    t,
    org,
  }) => {
    const [workflowId = ''] = await seedWorkflows(t, org.orgId, [{ name: 'Nurture', steps: [] }]);
    const out = await scheduleEmail(
      t,
      org,
      scheduleBody(account.id, leadId, { enroll_in_workflow_id: workflowId }),
    );
    expect((await scheduledEmailRow(t, out.job_id)).enrollInWorkflowId).toBe(workflowId);
  });
});

describe('list, get and cancel', () => {
  test('members see their own; managers and owners see the organization; another organization sees nothing', async ({
    t,
    org,
    other,
  }) => {
    const member = await t.createUser(org.orgId, 'member');
    const memberAccount = await insertConnectedAccount(t, { orgId: org.orgId, userId: member.userId }, SMTP);
    const mine = await scheduleEmail(
      t,
      member,
      scheduleBody(memberAccount.id, leadId, { subject: 'From the member' }),
    );
    const owners = await scheduleEmail(
      t,
      org,
      scheduleBody(account.id, leadId, { subject: 'From the owner' }),
    );

    const list = async (token: string, query = '') =>
      readOutput(
        await t.request('GET', `/api/v1/email/scheduled${query}`, { token }),
        TOOL.list_scheduled_emails,
      );
    const memberList = await list(member.token, '?limit=100');
    expect(memberList.scheduled_emails.map((e) => e._id)).toEqual([mine.job_id]);
    expect(memberList.total).toBe(1);

    const manager = await t.createUser(org.orgId, 'manager');
    const managerIds = (await list(manager.token, '?limit=100')).scheduled_emails.map((e) => e._id);
    expect(managerIds).toContain(mine.job_id);
    expect(managerIds).toContain(owners.job_id);
    expect((await list(other.token)).total).toBe(0);

    const got = await readOutput(
      await t.request('GET', `/api/v1/email/scheduled/${mine.job_id}`, { token: member.token }),
      TOOL.get_scheduled_email,
    );
    expect(got.scheduled_email).toMatchObject({
      _id: mine.job_id,
      status: 'scheduled',
      subject: 'From the member',
    });
    await readError(
      await t.request('GET', `/api/v1/email/scheduled/${owners.job_id}`, { token: member.token }),
      404,
    );
    await readError(
      await t.request('GET', `/api/v1/email/scheduled/${mine.job_id}`, { token: other.token }),
      404,
    );
    await readError(
      await t.request('DELETE', `/api/v1/email/scheduled/${owners.job_id}`, { token: member.token }),
      404,
    );
    await readError(
      await t.request('DELETE', `/api/v1/email/scheduled/${mine.job_id}`, { token: other.token }),
      404,
    );
    await readError(await t.request('GET', '/api/v1/email/scheduled/not-an-id', { token: org.token }), 400);

    const filtered = await list(org.token, `?status=scheduled&lead_id=${leadId}&limit=100`);
    expect(filtered.scheduled_emails.every((e) => e.status === 'scheduled' && e.lead_id === leadId)).toBe(
      true,
    );
    await readError(await t.request('GET', '/api/v1/email/scheduled?status=lost', { token: org.token }), 400);
  });

  test('cancels while scheduled (again: unchanged); a sent or failed email is a 400 invalid_transition', async ({
    t,
    org,
  }) => {
    const out = await scheduleEmail(t, org, scheduleBody(account.id, leadId));
    const cancel = () => t.request('DELETE', `/api/v1/email/scheduled/${out.job_id}`, { token: org.token });
    const cancelled = await readOutput(await cancel(), TOOL.cancel_scheduled_email);
    expect(cancelled.scheduled_email).toMatchObject({
      status: 'cancelled',
      cancelled_at: expect.any(String),
    });
    expect((await scheduledEmailRow(t, out.job_id)).nextAttemptAt).toBeNull();
    expect((await readOutput(await cancel(), TOOL.cancel_scheduled_email)).scheduled_email.status).toBe(
      'cancelled',
    );

    for (const status of ['sent', 'failed', 'sending'] as const) {
      const done = await scheduleEmail(t, org, scheduleBody(account.id, leadId));
      await t.services.db.system
        .update(scheduledEmails)
        .set({ status })
        .where(eq(scheduledEmails.id, done.job_id));
      const error = await readError(
        await t.request('DELETE', `/api/v1/email/scheduled/${done.job_id}`, { token: org.token }),
        400,
      );
      expect(error.code).toBe('invalid_transition');
      expect(error.message).toContain(`${status} -> cancelled is not allowed`);
      expect((await scheduledEmailRow(t, done.job_id)).status).toBe(status);
    }
  });
});

describe('access', () => {
  test('viewers read but do not schedule or cancel (403)', async ({ t, org }) => {
    const viewer = await t.createUser(org.orgId, 'viewer');
    expect((await t.request('GET', '/api/v1/email/scheduled', { token: viewer.token })).status).toBe(200);
    await readError(await post(t, org, scheduleBody(account.id, leadId), viewer.token), 403);
    const out = await scheduleEmail(t, org, scheduleBody(account.id, leadId));
    await readError(
      await t.request('DELETE', `/api/v1/email/scheduled/${out.job_id}`, { token: viewer.token }),
      403,
    );
  });

  test('PATs need read:email to read and write:email to schedule (not in the defaults)', async ({
    t,
    org,
  }) => {
    const reader = await t.createPat(org.orgId, org.ownerId, ['read:email']);
    expect((await t.request('GET', '/api/v1/email/scheduled', { token: reader.token })).status).toBe(200);
    const denied = await readError(await post(t, org, scheduleBody(account.id, leadId), reader.token), 403);
    expect(denied.required_scope).toBe('write:email');
    const leadsOnly = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    await readError(await t.request('GET', '/api/v1/email/scheduled', { token: leadsOnly.token }), 403);
    const writer = await t.createPat(org.orgId, org.ownerId, ['read:email', 'write:email']);
    await scheduleEmail(t, writer, scheduleBody(account.id, leadId));
  });
});

describe('MCP schedule_email', () => {
  test('previews without confirm (nothing written), schedules with confirm: true', async ({ t, org }) => {
    const { url, stop } = await serveMcp(t);
    const era = ERAS[0];
    if (!era) throw new Error('no MCP client era');
    const client = await era.connect(url, { ...bearer(org.token), 'X-MCP-Toolsets': 'email' });
    const count = async () =>
      (await t.services.db.system.select().from(scheduledEmails).where(eq(scheduledEmails.orgId, org.orgId)))
        .length;
    try {
      const before = await count();
      const at = minutesFromNow(60);
      const args = scheduleBody(account.id, leadId, {
        scheduled_at: at,
        cc: ['boss@globex.example'],
        attachments: [await uploadAttachment(t, org, { filename: 'offer.pdf', bytes: new Uint8Array(42) })],
        follow_up: { amount: 3, unit: 'days' },
      });
      const preview = await client.callTool('schedule_email', args);
      expect(preview.isError ?? false).toBe(false);
      const body = TOOL.schedule_email.output.parse(preview.structuredContent);
      expect(body.job_id).toBeUndefined();
      expect(body.preview).toEqual({
        action: 'Schedule an e-mail to hank@globex.example, sent through your connected account',
        sender: expect.stringContaining(account.email),
        to: ['hank@globex.example'],
        cc: ['boss@globex.example'],
        bcc: [],
        subject: 'Our proposal',
        amounts: [],
        send_at: at,
        attachments: ['offer.pdf'],
        details: ['A follow-up task for you if no reply arrives within 3 days'],
      });
      expect(await count()).toBe(before);

      const refused = await client.callTool('schedule_email', { ...args, scheduled_at: minutesFromNow(-1) });
      expect(refused.isError).toBe(true);
      expect(await count()).toBe(before);

      const done = TOOL.schedule_email.output.parse(
        (await client.callTool('schedule_email', { ...args, confirm: true })).structuredContent,
      );
      expect(done.job_id).toEqual(expect.any(String));
      expect(await count()).toBe(before + 1);
      const listed = TOOL.list_scheduled_emails.output.parse(
        (await client.callTool('list_scheduled_emails', { lead_id: leadId, limit: 100 })).structuredContent,
      );
      expect(listed.scheduled_emails.map((e) => e._id)).toContain(done.job_id);
    } finally {
      await client.close();
      await stop();
    }
  });
});
