// Locks in that every REST route taking a record id answers 404 for another organization's record and leaves it untouched.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { apiKeys, users } from '../core/db/schema.ts';
import { newId } from '../core/ids.ts';
import type { Route } from '../core/route.ts';
import { activities } from '../tools/activities/tables.ts';
import { connectedAccounts, inboundEmails } from '../tools/connected-accounts/tables.ts';
import { contacts } from '../tools/contacts/tables.ts';
import { customActivityTypes } from '../tools/custom-activity-types/tables.ts';
import { customObjectRecords, customObjects } from '../tools/custom-objects/tables.ts';
import { scheduledEmails } from '../tools/email/tables.ts';
import { estimates } from '../tools/estimates/tables.ts';
import { ROUTES } from '../tools/index.ts';
import { invoices } from '../tools/invoices/tables.ts';
import { leads } from '../tools/leads/tables.ts';
import { opportunities } from '../tools/opportunities/tables.ts';
import { projectTemplates } from '../tools/project-templates/tables.ts';
import { projects, timeEntries } from '../tools/projects/tables.ts';
import { proposals } from '../tools/proposals/tables.ts';
import { smartViews } from '../tools/smart-views/tables.ts';
import { tasks } from '../tools/tasks/tables.ts';
import { webhookDeliveries, webhooks } from '../tools/webhooks/tables.ts';
import { workflowEnrollments, workflows } from '../tools/workflows/tables.ts';
import { createConnectedAccount } from './fixtures/index.ts';
import { createTestContext, json, type TestContext, type TestOrg } from './helpers.ts';

type JsonSchema = z.core.JSONSchema.JSONSchema;

let t: TestContext;
/** The organization whose records are probed. */
let orgA: TestOrg;
/** The intruder: its owner holds every permission, and its plan every feature. */
let orgB: TestOrg;

beforeAll(async () => {
  t = await createTestContext();
  orgA = await t.createOrg({ name: 'Victim', plan: 'enterprise' });
  orgB = await t.createOrg({ name: 'Intruder', plan: 'enterprise' });
});
afterAll(() => t.close());

interface Fixture {
  /** The value for every id-like path parameter not named in `params`. */
  id: string;
  /** Values of particular path parameters, for routes that address two records (`:objectId/records/:recordId`). */
  params?: Record<string, string>;
  /** Re-reads the record (and whatever a route could change about it) through system access. */
  read(): Promise<unknown>;
  /** A body naming the organization's own records, for write routes whose body must reference one (a lead to apply a template to). */
  body?: Record<string, unknown>;
}

/**
 * One factory per resource prefix: it creates a record of org A that routes under that prefix
 * address by id. A new resource with `/:id` routes must add its factory here.
 */
const FACTORIES: Record<string, (org: TestOrg) => Promise<Fixture>> = {
  '/leads': async (org) => {
    const id = newId();
    await t.services.db.system
      .insert(leads)
      .values({ id, orgId: org.orgId, name: 'Victim lead', ownerId: org.ownerId });
    return { id, read: () => t.services.db.system.select().from(leads).where(eq(leads.id, id)) };
  },
  '/users': async (org) => {
    const { userId } = await t.createUser(org.orgId, 'member');
    return {
      id: userId,
      read: async () => ({
        user: await t.services.db.system.select().from(users).where(eq(users.id, userId)),
        keys: await t.services.db.system.select().from(apiKeys).where(eq(apiKeys.userId, userId)),
      }),
    };
  },
  '/settings/api-keys': async (org) => {
    const { keyId } = await t.createPat(org.orgId, org.ownerId, ['read:leads', 'write:leads']);
    return {
      id: keyId,
      read: () => t.services.db.system.select().from(apiKeys).where(eq(apiKeys.id, keyId)),
    };
  },
  '/contacts': async (org) => {
    const leadId = await insertLead(org);
    const id = newId();
    await t.services.db.system
      .insert(contacts)
      .values({ id, orgId: org.orgId, leadId, name: 'Victim contact' });
    return { id, read: () => t.services.db.system.select().from(contacts).where(eq(contacts.id, id)) };
  },
  '/opportunities': async (org) => {
    const leadId = await insertLead(org);
    const id = newId();
    await t.services.db.system
      .insert(opportunities)
      .values({ id, orgId: org.orgId, leadId, value: 1000, ownerId: org.ownerId });
    return {
      id,
      read: () => t.services.db.system.select().from(opportunities).where(eq(opportunities.id, id)),
    };
  },
  '/email/scheduled': async (org) => {
    const leadId = await insertLead(org);
    const id = newId();
    await t.services.db.system.insert(scheduledEmails).values({
      id,
      orgId: org.orgId,
      userId: org.ownerId,
      leadId,
      toAddress: 'victim@example.test',
      subject: 'Victim email',
      bodyHtml: '<p>x</p>',
      scheduledAt: new Date(Date.now() + 3_600_000),
      nextAttemptAt: new Date(Date.now() + 3_600_000),
    });
    return {
      id,
      read: () => t.services.db.system.select().from(scheduledEmails).where(eq(scheduledEmails.id, id)),
    };
  },
  '/invoices': async (org) => {
    const leadId = await insertLead(org);
    const id = newId();
    await t.services.db.system.insert(invoices).values({
      id,
      orgId: org.orgId,
      leadId,
      currency: 'USD',
      lineItems: [{ description: 'Work', quantity: 1, unit_price: 10 }],
      subtotalMinor: 1000n,
      taxTotalMinor: 0n,
      totalMinor: 1000n,
    });
    return { id, read: () => t.services.db.system.select().from(invoices).where(eq(invoices.id, id)) };
  },
  '/estimates': async (org) => {
    const leadId = await insertLead(org);
    const id = newId();
    await t.services.db.system.insert(estimates).values({
      id,
      orgId: org.orgId,
      leadId,
      number: `EST-${id}`,
      status: 'sent',
      currency: 'USD',
      lineItems: [{ description: 'Work', quantity: 1, unit_price: 10 }],
      subtotalMinor: 1000n,
      taxTotalMinor: 0n,
      totalMinor: 1000n,
    });
    return { id, read: () => t.services.db.system.select().from(estimates).where(eq(estimates.id, id)) };
  },
  '/projects': async (org) => {
    const leadId = await insertLead(org);
    const id = newId();
    const entryId = newId();
    await t.services.db.system.insert(projects).values({
      id,
      orgId: org.orgId,
      leadId,
      name: 'Victim project',
      currency: 'USD',
      hourlyRateMinor: 9000n,
    });
    await t.services.db.system.insert(timeEntries).values({
      id: entryId,
      orgId: org.orgId,
      projectId: id,
      userId: org.ownerId,
      date: '2026-11-03',
      minutes: 60,
      description: 'Victim time',
    });
    return {
      id,
      params: { id, entryId },
      read: async () => ({
        project: await t.services.db.system.select().from(projects).where(eq(projects.id, id)),
        entries: await t.services.db.system.select().from(timeEntries).where(eq(timeEntries.projectId, id)),
        invoices: await t.services.db.system.select().from(invoices).where(eq(invoices.projectId, id)),
      }),
    };
  },
  '/project-templates': async (org) => {
    const id = newId();
    const leadId = await insertLead(org);
    await t.services.db.system.insert(projectTemplates).values({
      id,
      orgId: org.orgId,
      name: 'Victim template',
      currency: 'USD',
      tasks: [{ text: 'Victim task', offset_days: 0, weight: 1 }],
    });
    return {
      id,
      body: { lead_id: leadId },
      read: async () => ({
        template: await t.services.db.system
          .select()
          .from(projectTemplates)
          .where(eq(projectTemplates.id, id)),
        projects: await t.services.db.system.select().from(projects).where(eq(projects.orgId, org.orgId)),
      }),
    };
  },
  // The onboarding route's id is a lead's.
  '/project-templates/leads': async (org) => {
    const id = await insertLead(org);
    return { id, read: () => t.services.db.system.select().from(leads).where(eq(leads.id, id)) };
  },
  '/proposals': async (org) => {
    const leadId = await insertLead(org);
    const id = newId();
    await t.services.db.system.insert(proposals).values({
      id,
      orgId: org.orgId,
      leadId,
      title: 'Victim proposal',
      sections: [{ heading: 'Scope', body_markdown: 'Work' }],
    });
    return { id, read: () => t.services.db.system.select().from(proposals).where(eq(proposals.id, id)) };
  },
  '/workflows': async (org) => {
    const leadId = await insertLead(org);
    const id = newId();
    const enrollmentId = newId();
    const steps = [{ type: 'task' as const, delay: { amount: 1, unit: 'days' as const }, text: 'Call back' }];
    await t.services.db.system.insert(workflows).values({
      id,
      orgId: org.orgId,
      name: 'Victim workflow',
      status: 'active',
      steps,
    });
    await t.services.db.system.insert(workflowEnrollments).values({
      id: enrollmentId,
      orgId: org.orgId,
      workflowId: id,
      leadId,
      steps,
      enrolledBy: org.ownerId,
      nextRunAt: new Date(Date.now() + 86_400_000),
    });
    return {
      id,
      params: { id, enrollmentId },
      body: { lead_id: leadId },
      read: async () => ({
        workflow: await t.services.db.system.select().from(workflows).where(eq(workflows.id, id)),
        enrollments: await t.services.db.system
          .select()
          .from(workflowEnrollments)
          .where(eq(workflowEnrollments.workflowId, id)),
      }),
    };
  },
  '/proposal-ai': async (org) => {
    const leadId = await insertLead(org);
    const id = newId();
    await t.services.db.system.insert(proposals).values({
      id,
      orgId: org.orgId,
      leadId,
      title: 'Victim proposal',
      sections: [{ heading: 'Scope', body_markdown: 'Work' }],
    });
    return { id, read: () => t.services.db.system.select().from(proposals).where(eq(proposals.id, id)) };
  },
  '/activities': async (org) => {
    const leadId = await insertLead(org);
    const id = newId();
    await t.services.db.system.insert(activities).values({
      id,
      orgId: org.orgId,
      leadId,
      type: 'call',
      userId: org.ownerId,
      fields: { direction: 'outbound', duration_seconds: 60, status: 'in_progress' },
    });
    return { id, read: () => t.services.db.system.select().from(activities).where(eq(activities.id, id)) };
  },
  '/tasks': async (org) => {
    const leadId = await insertLead(org);
    const id = newId();
    await t.services.db.system.insert(tasks).values({
      id,
      orgId: org.orgId,
      leadId,
      assignedTo: org.ownerId,
      text: 'Victim task',
      dueAt: new Date(Date.now() + 86_400_000),
      snoozedUntil: new Date(Date.now() + 3_600_000),
    });
    return { id, read: () => t.services.db.system.select().from(tasks).where(eq(tasks.id, id)) };
  },
  '/smart-views': async (org) => {
    const id = newId();
    await t.services.db.system.insert(smartViews).values({
      id,
      orgId: org.orgId,
      name: 'Victim view',
      query: { logic: 'and', filters: [] },
      visibility: 'shared',
      ownerId: org.ownerId,
    });
    return { id, read: () => t.services.db.system.select().from(smartViews).where(eq(smartViews.id, id)) };
  },
  // A definition with one record: routes address the definition (`:id`, `:objectId`) or the record.
  '/custom-objects': async (org) => {
    const objectId = newId();
    const recordId = newId();
    await t.services.db.system.insert(customObjects).values({
      id: objectId,
      orgId: org.orgId,
      name: `Victim object ${objectId}`,
      fields: [{ key: 'title', label: 'Title', type: 'text', required: false }],
    });
    await t.services.db.system.insert(customObjectRecords).values({
      id: recordId,
      orgId: org.orgId,
      objectId,
      values: { title: 'Victim record' },
      ownerId: org.ownerId,
    });
    return {
      id: objectId,
      params: { objectId, recordId },
      read: async () => ({
        object: await t.services.db.system.select().from(customObjects).where(eq(customObjects.id, objectId)),
        records: await t.services.db.system
          .select()
          .from(customObjectRecords)
          .where(eq(customObjectRecords.objectId, objectId)),
      }),
    };
  },
  '/custom-activity-types': async (org) => {
    const id = newId();
    await t.services.db.system.insert(customActivityTypes).values({
      id,
      orgId: org.orgId,
      name: `Victim type ${id}`,
      fields: [{ key: 'outcome', label: 'Outcome', type: 'text', required: false }],
    });
    return {
      id,
      read: () =>
        t.services.db.system.select().from(customActivityTypes).where(eq(customActivityTypes.id, id)),
    };
  },
  '/trash': async (org) => {
    const id = newId();
    await t.services.db.system.insert(leads).values({
      id,
      orgId: org.orgId,
      name: 'Trashed victim lead',
      ownerId: org.ownerId,
      deletedAt: new Date(),
      deletedBy: org.ownerId,
    });
    return { id, read: () => t.services.db.system.select().from(leads).where(eq(leads.id, id)) };
  },
  // The subscription and its delivery log: a test delivery or a deletion would change either.
  '/connected-accounts': async (org) => {
    // A closed port on loopback: the owner's control request to verify fails fast, reaching nothing.
    const { _id: id } = await createConnectedAccount(t, org, {
      smtp: { host: '127.0.0.1', port: 1, secure: false, username: 'victim', password: 'victim-password' },
    });
    return {
      id,
      read: async () => ({
        account: await t.services.db.system
          .select()
          .from(connectedAccounts)
          .where(eq(connectedAccounts.id, id)),
        inbound: await t.services.db.system
          .select()
          .from(inboundEmails)
          .where(eq(inboundEmails.connectedAccountId, id)),
      }),
    };
  },
  '/webhooks': async (org) => {
    const id = await insertWebhook(org);
    return {
      id,
      read: async () => ({
        webhook: await t.services.db.system.select().from(webhooks).where(eq(webhooks.id, id)),
        deliveries: await t.services.db.system
          .select()
          .from(webhookDeliveries)
          .where(eq(webhookDeliveries.webhookId, id)),
      }),
    };
  },
  // A finished delivery, so the owning organization's replay is accepted (pending ones are refused).
  '/webhooks/deliveries': async (org) => {
    const webhookId = await insertWebhook(org);
    const id = newId();
    await t.services.db.system.insert(webhookDeliveries).values({
      id,
      orgId: org.orgId,
      webhookId,
      event: 'lead.created',
      data: { name: 'Victim lead' },
      status: 'failed',
    });
    return {
      id,
      read: () => t.services.db.system.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)),
    };
  },
};

async function insertLead(org: TestOrg): Promise<string> {
  const id = newId();
  await t.services.db.system
    .insert(leads)
    .values({ id, orgId: org.orgId, name: 'Parent of a victim record', ownerId: org.ownerId });
  return id;
}

async function insertWebhook(org: TestOrg): Promise<string> {
  const id = newId();
  await t.services.db.system.insert(webhooks).values({
    id,
    orgId: org.orgId,
    url: 'https://victim.example.test/hook',
    events: ['lead.created'],
    secret: 'victim-signing-secret',
    createdBy: org.ownerId,
  });
  return id;
}

/** Bodies for tools whose required input the generic generator below cannot guess. */
const BODIES: Record<string, Record<string, unknown>> = {
  replace_lead: { name: 'Renamed by intruder' },
  update_lead: { name: 'Renamed by intruder' },
  update_user: { name: 'Renamed by intruder' },
  update_webhook: { is_active: false },
  record_invoice_payment: { amount: 1 },
};

const isIdParam = (name: string) => name === 'id' || name.endsWith('Id') || name.endsWith('_id');

function pathParams(path: string): string[] {
  return path
    .split('/')
    .filter((segment) => segment.startsWith(':'))
    .map((segment) =>
      segment
        .slice(1)
        .replace(/\{.*\}$/, '')
        .replace(/\?$/, ''),
    );
}

/** The static part of a path before its first parameter: `/leads/:id/convert-to-client` -> `/leads`. */
function staticPrefix(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/').slice(1)) {
    if (segment.startsWith(':')) break;
    segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

function factoryFor(route: Route): string | undefined {
  const prefix = staticPrefix(route.path);
  return Object.keys(FACTORIES)
    .filter((key) => prefix === key || prefix.startsWith(`${key}/`))
    .sort((a, b) => b.length - a.length)[0];
}

function fillPath(
  path: string,
  id: string,
  named: Record<string, string> = {},
): { url: string; params: Record<string, string> } {
  const params: Record<string, string> = {};
  const url = path
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment;
      const [name] = pathParams(`/${segment}`);
      const value = name === undefined ? '0' : (named[name] ?? (isIdParam(name) ? id : '0'));
      if (name) params[name] = value;
      return value;
    })
    .join('/');
  return { url: `/api/v1${url}`, params };
}

/** A minimal value satisfying a JSON Schema node (required properties only). */
function sample(schema: JsonSchema | boolean | undefined): unknown {
  if (schema === undefined || typeof schema === 'boolean') return 'x';
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const alternative = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (alternative) return sample(alternative);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      // Object-id fields get a well-formed id that names no record.
      if (schema.pattern && new RegExp(schema.pattern).test(newId())) return newId();
      if (schema.format === 'email') return 'probe@example.test';
      if (schema.format === 'uri' || schema.format === 'url') return 'https://example.test/probe';
      if (schema.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
      if (schema.format === 'date') return new Date().toISOString().slice(0, 10);
      return 'x'.repeat(Math.max(schema.minLength ?? 1, 1));
    }
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () =>
        sample(Array.isArray(schema.items) ? schema.items[0] : schema.items),
      );
    default: {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = sample(schema.properties?.[key]);
      return out;
    }
  }
}

/**
 * A body the tool's input schema accepts, so the request gets past validation and reaches the
 * lookup that must fail: an explicit entry, else nothing, else one generated from the schema.
 */
function bodyFor(
  route: Route,
  params: Record<string, string>,
  own?: Record<string, unknown>,
): Record<string, unknown> {
  const candidates: Record<string, unknown>[] = [];
  if (own) candidates.push(own);
  const explicit = BODIES[route.tool.name];
  if (explicit) candidates.push(explicit);
  candidates.push({});
  const generated = sample(z.toJSONSchema(route.tool.input, { io: 'input', unrepresentable: 'any' }));
  if (typeof generated === 'object' && generated !== null && !Array.isArray(generated)) {
    candidates.push(Object.fromEntries(Object.entries(generated).filter(([key]) => !(key in params))));
  }
  const body = candidates.find((c) => route.tool.input.safeParse({ ...c, ...params }).success);
  if (!body) {
    throw new Error(
      `No valid input for ${route.method} ${route.path} (${route.tool.name}): add an entry to BODIES in test/tenancy.test.ts`,
    );
  }
  return body;
}

const ID_ROUTES = ROUTES.filter((r) => pathParams(r.path).some(isIdParam));
const label = (r: Route) => `${r.method} ${r.path} (${r.tool.name})`;

describe('REST routes addressing a record by id', () => {
  it('exist, and each has a fixture factory for its resource', () => {
    expect(ID_ROUTES.length).toBeGreaterThan(0);
    const uncovered = ID_ROUTES.filter((r) => factoryFor(r) === undefined).map(label);
    expect(
      uncovered,
      'routes with an id parameter but no factory in FACTORIES of test/tenancy.test.ts',
    ).toEqual([]);
  });

  for (const route of ID_ROUTES) {
    it(`${label(route)} answers 404 to another organization and changes nothing`, async () => {
      const prefix = factoryFor(route);
      if (!prefix) throw new Error(`No fixture factory covers ${label(route)}`);
      const factory = FACTORIES[prefix];
      if (!factory) throw new Error(`FACTORIES has no entry ${prefix}`);
      const fixture = await factory(orgA);
      const { url, params } = fillPath(route.path, fixture.id, fixture.params);
      const body = route.method === 'GET' ? undefined : bodyFor(route, params, fixture.body);
      const before = await fixture.read();

      const res = await t.request(route.method, url, { token: orgB.token, body });
      const payload = await json(res);
      expect({ status: res.status, error: payload.error, code: payload.code }).toEqual({
        status: 404,
        error: 'Not found',
        // The tool's own lookup answered, not the router's "no such route".
        code: 'not_found',
      });
      expect(await fixture.read()).toEqual(before);

      // Control: the owning organization does find the record, so the 404 above is tenancy at work.
      const own = await t.request(route.method, url, { token: orgA.token, body });
      expect(own.status).not.toBe(404);
    });
  }
});
