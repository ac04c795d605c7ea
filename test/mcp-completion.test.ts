// Locks in completion/complete on both protocol eras with the official clients: record ids by name
// for a resource template's `id` and a prompt's id argument (the caller's organization only, names
// starting with the text first, at most 100), enum arguments from their zod enum, and nothing for
// what is unknown.
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { MAX_COMPLETIONS } from '../mcp/completion.ts';
import { fileTest } from './fixtures/file-test.ts';
import { createContact, createLead } from './fixtures/records.ts';
import { json } from './helpers.ts';
import { bearer, type CompleteParams, ERAS, serveMcpForFile } from './mcp-clients.ts';

const completeResult = z.object({
  completion: z.object({
    values: z.array(z.string()),
    total: z.number().optional(),
    hasMore: z.boolean().optional(),
  }),
});

const test = fileTest({ plan: 'enterprise' })
  .extend('mcpUrl', { scope: 'file' }, serveMcpForFile)
  .extend('records', { scope: 'file' }, async ({ t, org }) => {
    const globex = await createLead(t, org, { name: 'Globex Corporation' });
    const soylent = await createLead(t, org, { name: 'Soylent Globex Partners' });
    const initech = await createLead(t, org, { name: 'Initech' });
    const contact = await createContact(t, org, { lead_id: initech._id, name: 'Milton Waddams' });
    const key = (await t.createPat(org.orgId, org.ownerId, ['mcp:read'])).token;
    return { globex, soylent, initech, contact, key };
  })
  .extend('otherGlobex', { scope: 'file' }, async ({ t, other }) =>
    createLead(t, other, { name: 'Globex Elsewhere' }),
  )
  /** An organization with more matching leads than a completion may carry. */
  .extend('crowded', { scope: 'file' }, async ({ t }) => {
    const crowdedOrg = await t.createOrg();
    // A bulk request takes at most 100 leads.
    for (const [from, count] of [
      [0, MAX_COMPLETIONS],
      [MAX_COMPLETIONS, 5],
    ] as const) {
      const items = Array.from({ length: count }, (_, i) => ({ name: `Crowd ${from + i}` }));
      const res = await t.request('POST', '/api/v1/leads/bulk', { token: crowdedOrg.token, body: { items } });
      expect(res.status).toBe(200);
      expect(await json(res)).toMatchObject({ created: count });
    }
    return { key: (await t.createPat(crowdedOrg.orgId, crowdedOrg.ownerId, ['mcp:read'])).token };
  });

const leadTemplate = { type: 'ref/resource', uri: 'crm://leads/{id}' } as const;

describe.each(ERAS)('$label', (era) => {
  async function complete(url: URL, key: string, params: CompleteParams) {
    const client = await era.connect(url, bearer(key));
    try {
      return completeResult.parse(await client.complete(params)).completion;
    } finally {
      await client.close();
    }
  }

  test("completes a lead template's id by name, the caller's leads only, names starting with it first", async ({
    mcpUrl,
    records,
    otherGlobex,
  }) => {
    const completion = await complete(mcpUrl, records.key, {
      ref: leadTemplate,
      argument: { name: 'id', value: 'glob' },
    });
    expect(completion.values).toEqual([records.globex._id, records.soylent._id]);
    expect(completion.values).not.toContain(otherGlobex._id);
    expect(completion).toMatchObject({ total: 2, hasMore: false });
  });

  test('completes the record id arguments of prompts', async ({ mcpUrl, records }) => {
    const lead = await complete(mcpUrl, records.key, {
      ref: { type: 'ref/prompt', name: 'prepare_call' },
      argument: { name: 'lead_id', value: 'Initech' },
    });
    expect(lead.values).toEqual([records.initech._id]);
    const contact = await complete(mcpUrl, records.key, {
      ref: { type: 'ref/prompt', name: 'draft_follow_up' },
      argument: { name: 'contact_id', value: 'milt' },
    });
    expect(contact.values).toEqual([records.contact._id]);
  });

  test('completes enum arguments from their values', async ({ mcpUrl, records }) => {
    const ref = { type: 'ref/prompt', name: 'weekly_pipeline_review' } as const;
    expect(
      (await complete(mcpUrl, records.key, { ref, argument: { name: 'horizon_days', value: '' } })).values,
    ).toEqual(['7', '14', '30', '90']);
    expect(
      (await complete(mcpUrl, records.key, { ref, argument: { name: 'horizon_days', value: '1' } })).values,
    ).toEqual(['14']);
    const tone = await complete(mcpUrl, records.key, {
      ref: { type: 'ref/prompt', name: 'draft_follow_up' },
      argument: { name: 'tone', value: 'F' },
    });
    expect(tone.values).toEqual(['friendly', 'formal']);
  });

  test('completes to nothing for what it does not know', async ({ mcpUrl, records }) => {
    for (const params of [
      { ref: { type: 'ref/resource', uri: 'crm://unicorns/{id}' }, argument: { name: 'id', value: 'a' } },
      { ref: { type: 'ref/prompt', name: 'no_such_prompt' }, argument: { name: 'x', value: 'a' } },
      { ref: { type: 'ref/prompt', name: 'draft_follow_up' }, argument: { name: 'goal', value: 'a' } },
      { ref: leadTemplate, argument: { name: 'id', value: 'zzzzqqq' } },
    ] satisfies CompleteParams[]) {
      expect((await complete(mcpUrl, records.key, params)).values).toEqual([]);
    }
  });

  test('carries at most 100 ids and says there are more', async ({ mcpUrl, crowded }) => {
    const completion = await complete(mcpUrl, crowded.key, {
      ref: leadTemplate,
      argument: { name: 'id', value: 'crowd' },
    });
    expect(completion.values).toHaveLength(MAX_COMPLETIONS);
    expect(completion).toMatchObject({ total: MAX_COMPLETIONS + 5, hasMore: true });
  });
});
