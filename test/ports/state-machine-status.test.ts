// The state machine owns its status type: its zod schema, the parse of a stored status (an unknown
// one is a fault, never silently the initial state) and the one refusal an area raises for a rule of
// its own. Over REST: a row whose stored status is none of the machine's states answers a 500, not a
// draft; and every machine in STATE_MACHINES parses exactly its states.
import { eq } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { AppError } from '../../core/errors.ts';
import { defineStateMachine } from '../../core/state-machine.ts';
import { STATE_MACHINES } from '../../tools/index.ts';
import { invoices } from '../../tools/invoices/tables.ts';
import { fileTest } from '../fixtures/file-test.ts';
import { createInvoice } from '../fixtures/invoices.ts';
import { json } from '../helpers.ts';

const invoice = defineStateMachine({
  resource: 'invoice',
  field: 'status',
  states: ['draft', 'open', 'paid'],
  initial: 'draft',
  moves: { draft: { open: null }, open: { paid: 'invoice.paid' } },
});

const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' });

describe('a machine owns its status type', () => {
  test('parses a stored status of its states and throws on any other, never falling back', () => {
    expect(invoice.parse('open')).toBe('open');
    expect(() => invoice.parse('opened')).toThrow(
      'invoice status: stored value "opened" is none of draft, open, paid',
    );
    expect(() => invoice.parse('')).toThrow(/is none of/);
    // A plain Error (a logged 500), not a client error: the data is at fault, not the request.
    expect(() => invoice.parse('x')).not.toThrow(AppError);
  });

  test('exposes its states as a zod enum', () => {
    expect(invoice.schema.options).toEqual(['draft', 'open', 'paid']);
    expect(invoice.schema.safeParse('paid').success).toBe(true);
    expect(invoice.schema.safeParse('void').success).toBe(false);
  });

  test('refuses with the 400 invalid_transition naming its field and the reason', () => {
    let caught: unknown;
    try {
      invoice.refuse('the invoice is already paid in full');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AppError);
    const error = caught instanceof AppError ? caught : undefined;
    expect(error?.code).toBe('invalid_transition');
    expect(error?.message).toBe('the invoice is already paid in full');
    expect(error?.status).toBe(400);
    expect(error?.body.details).toEqual([
      { field: 'status', message: 'the invoice is already paid in full', code: 'invalid_transition' },
    ]);
  });

  test('assertMove refuses through the same refusal', () => {
    expect(() => invoice.assertMove('draft', 'paid')).toThrow(AppError);
    expect(() => invoice.assertMove('draft', 'paid')).toThrow('draft -> paid is not allowed; allowed: open');
  });

  test('every declared machine parses exactly its own states', () => {
    for (const machine of STATE_MACHINES) {
      for (const state of machine.states) expect(machine.parse(state)).toBe(state);
      expect(machine.schema.options).toEqual([...machine.states]);
      expect(() => machine.parse('no-such-state')).toThrow(/is none of/);
    }
  });
});

describe('an unknown stored status over REST', () => {
  test('answers a 500 instead of showing the invoice as a draft', async ({ t, org }) => {
    const created = await createInvoice(t, org);
    const ok = await t.request('GET', `/api/v1/invoices/${created._id}`, { token: org.token });
    expect(ok.status).toBe(200);
    await t.services.db.system
      .update(invoices)
      .set({ status: 'archived' })
      .where(eq(invoices.id, created._id));
    const res = await t.request('GET', `/api/v1/invoices/${created._id}`, { token: org.token });
    expect(res.status).toBe(500);
    expect(JSON.stringify(await json(res))).not.toContain('draft');
  });
});
