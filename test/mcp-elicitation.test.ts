// Locks in the confirm convention with elicitation: on a 2026-07-28 client that declares form
// elicitation, a sending tool called without `confirm: true` asks the person to confirm its preview
// (elicitation/create through the SDK's input-required exchange): accept sends, decline and cancel
// answer the preview with sent: false and send nothing. A client that declares no elicitation, and
// the 2025 revisions served statelessly, keep the plain preview and are never asked.
import {
  Client,
  StreamableHTTPClientTransport,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { outgoingMails } from '../core/db/schema.ts';
import {
  createInvoice,
  createLeadWithContact,
  fileTest,
  type TestContext,
  type TestOrg,
} from './fixtures/index.ts';
import { bearer, callResult, serveMcpForFile } from './mcp-clients.ts';

type Answer =
  | { action: 'accept'; content: { confirm: boolean } }
  | { action: 'decline' }
  | { action: 'cancel' };

const sendAnswer = z.looseObject({
  sent: z.boolean(),
  preview: z.looseObject({ to: z.array(z.string()) }).optional(),
});

interface Asking {
  client: Client;
  /** The messages the person was shown. */
  asked: string[];
}

/** A 2.x client of the given era; with `answer`, it declares form elicitation and answers every question so. */
async function connect(
  url: URL,
  token: string,
  mode: VersionNegotiationMode,
  answer?: Answer,
): Promise<Asking> {
  const asked: string[] = [];
  const client = new Client(
    { name: 'crm-elicitation-test', version: '1.0.0' },
    { versionNegotiation: { mode }, ...(answer && { capabilities: { elicitation: { form: {} } } }) },
  );
  if (answer) {
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(request.params.message);
      return answer;
    });
  }
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { ...bearer(token), 'X-MCP-Toolsets': 'all' } },
    }),
  );
  return { client, asked };
}

async function mailsOf(t: TestContext, org: TestOrg): Promise<number> {
  return t.services.db.system.$count(outgoingMails, eq(outgoingMails.orgId, org.orgId));
}

/** A draft invoice to a contact with an address, ready to send. */
async function invoiceToSend(t: TestContext, org: TestOrg) {
  const { leadId, email } = await createLeadWithContact(t, org);
  const invoice = await createInvoice(t, org, { lead_id: leadId });
  return { id: invoice._id, email };
}

async function sendInvoice(client: Client, id: string) {
  const result = callResult.parse(await client.callTool({ name: 'send_invoice', arguments: { id } }));
  expect(result.isError).not.toBe(true);
  return sendAnswer.parse(result.structuredContent);
}

const test = fileTest({ plan: 'enterprise' })
  .extend('mcpUrl', { scope: 'file' }, serveMcpForFile)
  .extend(
    'key',
    { scope: 'file' },
    async ({ t, org }) => (await t.createPat(org.orgId, org.ownerId, ['mcp:write'])).token,
  );

const MODERN = { pin: '2026-07-28' } as const;

describe('2026-07-28 era, a client declaring form elicitation', () => {
  test('asks the person with the preview, and sends when they accept', async ({ t, org, mcpUrl, key }) => {
    const { id, email } = await invoiceToSend(t, org);
    const { client, asked } = await connect(mcpUrl, key, MODERN, {
      action: 'accept',
      content: { confirm: true },
    });
    try {
      const before = await mailsOf(t, org);
      const answer = await sendInvoice(client, id);
      expect(answer.sent).toBe(true);
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain(email);
      expect(asked[0]).toContain('Send it?');
      expect(await mailsOf(t, org)).toBe(before + 1);
    } finally {
      await client.close();
    }
  });

  for (const answer of [
    { action: 'decline' },
    { action: 'cancel' },
    { action: 'accept', content: { confirm: false } },
  ] satisfies Answer[]) {
    test(`answers the preview and sends nothing on ${JSON.stringify(answer)}`, async ({
      t,
      org,
      mcpUrl,
      key,
    }) => {
      const { id, email } = await invoiceToSend(t, org);
      const { client, asked } = await connect(mcpUrl, key, MODERN, answer);
      try {
        const before = await mailsOf(t, org);
        const result = await sendInvoice(client, id);
        expect(result).toMatchObject({ sent: false, preview: { to: [email] } });
        expect(asked).toHaveLength(1);
        expect(await mailsOf(t, org)).toBe(before);
      } finally {
        await client.close();
      }
    });
  }

  test('never asks when the call already says confirm: true', async ({ t, org, mcpUrl, key }) => {
    const { id } = await invoiceToSend(t, org);
    const { client, asked } = await connect(mcpUrl, key, MODERN, { action: 'decline' });
    try {
      const result = callResult.parse(
        await client.callTool({ name: 'send_invoice', arguments: { id, confirm: true } }),
      );
      expect(sendAnswer.parse(result.structuredContent).sent).toBe(true);
      expect(asked).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('clients that cannot be asked keep the plain preview', () => {
  test('2026-07-28 era without the elicitation capability', async ({ t, org, mcpUrl, key }) => {
    const { id, email } = await invoiceToSend(t, org);
    const { client } = await connect(mcpUrl, key, MODERN);
    try {
      const before = await mailsOf(t, org);
      expect(await sendInvoice(client, id)).toMatchObject({ sent: false, preview: { to: [email] } });
      expect(await mailsOf(t, org)).toBe(before);
    } finally {
      await client.close();
    }
  });

  test('2025 era (stateless: no server knows the client declared elicitation)', async ({
    t,
    org,
    mcpUrl,
    key,
  }) => {
    const { id, email } = await invoiceToSend(t, org);
    const { client, asked } = await connect(mcpUrl, key, 'legacy', {
      action: 'accept',
      content: { confirm: true },
    });
    try {
      const before = await mailsOf(t, org);
      expect(await sendInvoice(client, id)).toMatchObject({ sent: false, preview: { to: [email] } });
      expect(asked).toEqual([]);
      expect(await mailsOf(t, org)).toBe(before);
    } finally {
      await client.close();
    }
  });
});
