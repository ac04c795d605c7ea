// The lead's MCP prompts: prepare for a call with a lead, and draft a follow-up to a lead or one of
// its contacts. Each reads the records it names through the read tools (by name, so this area
// imports none of the others), with the caller's access, and embeds what they answered.
import { z } from 'zod';
import { definePrompt, type PromptContext, type PromptMessage } from '../../core/prompts.ts';
import { objectId } from '../../core/schemas.ts';

/** A list tool's answer as a message block: what it is, how many of how many, and the JSON. */
function listBlock(heading: string, answer: Record<string, unknown>, key: string): PromptMessage {
  const items = Array.isArray(answer[key]) ? answer[key] : [];
  const total = typeof answer.total === 'number' ? answer.total : items.length;
  const shown = total > items.length ? `${items.length} of ${total}` : String(items.length);
  return {
    role: 'user',
    content: { type: 'text', text: `${heading} (${shown}):\n${JSON.stringify(items, null, 2)}` },
  };
}

/** The part a caller may not read, said instead of left out silently. */
function notReadable(heading: string, tool: string): PromptMessage {
  return {
    role: 'user',
    content: { type: 'text', text: `${heading}: not shown (your access does not include ${tool}).` },
  };
}

/** The lead's recent timeline and open tasks, each when the caller may read it. */
async function leadContext(ctx: PromptContext, leadId: string): Promise<PromptMessage[]> {
  const messages: PromptMessage[] = [];
  if (ctx.canRead('list_lead_activities')) {
    const activities = await ctx.read('list_lead_activities', { id: leadId, limit: 10 });
    messages.push(listBlock('Recent activities, newest first', activities, 'activities'));
  } else {
    messages.push(notReadable('Recent activities', 'list_lead_activities'));
  }
  if (ctx.canRead('list_tasks')) {
    const tasks = await ctx.read('list_tasks', {
      lead_id: leadId,
      is_complete: false,
      sort: 'due_at',
      limit: 25,
    });
    messages.push(listBlock('Open tasks, soonest due first', tasks, 'tasks'));
  } else {
    messages.push(notReadable('Open tasks', 'list_tasks'));
  }
  return messages;
}

function leadOf(answer: Record<string, unknown>): Record<string, unknown> {
  const lead = answer.lead;
  if (typeof lead !== 'object' || lead === null) throw new Error('get_lead answered without a lead');
  return { ...lead };
}

function nameOf(record: Record<string, unknown>, fallback: string): string {
  return typeof record.name === 'string' && record.name.length > 0 ? record.name : fallback;
}

const prepareCall = definePrompt({
  name: 'prepare_call',
  title: 'Prepare for a call with a lead',
  description:
    'A briefing before a call: the lead, its contacts, open opportunities, recent activities and open tasks as the CRM ' +
    'holds them now, with the questions worth asking.',
  arguments: z.strictObject({
    lead_id: objectId('lead').describe('The lead the call is with (24 hex characters)'),
  }),
  reads: ['get_lead', 'list_contacts', 'list_opportunities'],
  optionalReads: ['list_lead_activities', 'list_tasks'],
  recordArguments: { lead_id: 'leads' },
  async build({ lead_id }, ctx) {
    const lead = leadOf(await ctx.read('get_lead', { id: lead_id }));
    const contacts = await ctx.read('list_contacts', { lead_id, sort: 'name', limit: 50 });
    const deals = await ctx.read('list_opportunities', {
      lead_id,
      status: 'active',
      sort: 'expected_close_date',
      limit: 50,
    });
    const name = nameOf(lead, 'this lead');
    return {
      description: `Briefing for a call with ${name}`,
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              `I have a call with ${name}. Brief me from the CRM records below and nothing else: who they are and ` +
              'where the relationship stands, who I am likely to speak to, the open opportunities (value, stage, ' +
              'expected close), what happened recently, what we owe them (open tasks), then three questions worth ' +
              'asking and the outcome to aim for. Say plainly when something is missing or out of date.',
          },
        },
        { role: 'user', content: ctx.record('leads', lead_id, { lead }) },
        listBlock('Contacts', contacts, 'contacts'),
        listBlock('Open opportunities, soonest expected close first', deals, 'opportunities'),
        ...(await leadContext(ctx, lead_id)),
      ],
    };
  },
});

const TONES = ['friendly', 'formal', 'brief'] as const;

/** What the prompt reads of get_contact's answer. */
const contactShape = z.looseObject({ lead_id: z.string(), name: z.string() });

const draftFollowUp = definePrompt({
  name: 'draft_follow_up',
  title: 'Draft a follow-up',
  description:
    'A follow-up message to a lead or to one of its contacts, grounded in the lead, the person and the recent activity; ' +
    'give lead_id or contact_id, and optionally the goal and tone.',
  arguments: z
    .strictObject({
      lead_id: objectId('lead').optional().describe('The lead to follow up with (give this or contact_id)'),
      contact_id: objectId('contact')
        .optional()
        .describe('The person to write to; their lead is read too (give this or lead_id)'),
      goal: z
        .string()
        .max(500)
        .optional()
        .describe('What the follow-up should achieve, e.g. "book a demo next week"'),
      tone: z.enum(TONES).optional().describe('friendly (default), formal or brief'),
    })
    .refine((args) => (args.lead_id === undefined) !== (args.contact_id === undefined), {
      message: 'Give either lead_id or contact_id, not both',
      path: ['lead_id'],
    }),
  reads: ['get_lead', 'get_contact', 'list_contacts'],
  optionalReads: ['list_lead_activities', 'list_tasks'],
  recordArguments: { lead_id: 'leads', contact_id: 'contacts' },
  async build(args, ctx) {
    const messages: PromptMessage[] = [];
    let leadId = args.lead_id;
    let recipient = 'the right person at the lead (see the contacts)';
    if (args.contact_id !== undefined) {
      const answer = await ctx.read('get_contact', { id: args.contact_id });
      const contact = contactShape.parse(answer.contact);
      leadId = contact.lead_id;
      recipient = nameOf(contact, 'this contact');
      messages.push({ role: 'user', content: ctx.record('contacts', args.contact_id, answer) });
    }
    if (leadId === undefined) throw new Error('The contact answered without its lead');
    const lead = leadOf(await ctx.read('get_lead', { id: leadId }));
    messages.push({ role: 'user', content: ctx.record('leads', leadId, { lead }) });
    if (args.contact_id === undefined) {
      const contacts = await ctx.read('list_contacts', { lead_id: leadId, sort: 'name', limit: 50 });
      messages.push(listBlock('Contacts', contacts, 'contacts'));
    }
    messages.push(...(await leadContext(ctx, leadId)));
    const goal = args.goal ?? 'keep the conversation moving toward a next step';
    return {
      description: `Follow-up to ${recipient} at ${nameOf(lead, 'the lead')}`,
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              `Draft a follow-up to ${recipient} at ${nameOf(lead, 'the lead')}. Goal: ${goal}. Tone: ` +
              `${args.tone ?? 'friendly'}. Use only the facts in the CRM records below (refer to the last ` +
              'exchange, honour any open promise), keep it short, and end with one clear next step. Do not send ' +
              'it: show me the draft (a sending tool only previews until I confirm).',
          },
        },
        ...messages,
      ],
    };
  },
});

export const leadPrompts = [prepareCall, draftFollowUp];
