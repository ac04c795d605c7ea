// The reference evaluator of the smart views (tools/smart-views/query): the semantics written plainly
// in JavaScript over rows held in memory. Tests run random queries through both this and the
// compiled SQL and require the same lead ids, so the SQL compiler cannot drift from the documented
// meaning of a filter. A test helper only, so it reads the areas' row types freely.
import type { ActivityRow } from '../../tools/activities/tables.ts';
import type { ContactRow } from '../../tools/contacts/tables.ts';
import type { LeadRow } from '../../tools/leads/tables.ts';
import type { OpportunityRow } from '../../tools/opportunities/tables.ts';
import { BUILT_IN_ACTIVITY_TYPES, type FieldKind, type Op } from '../../tools/smart-views/query/catalogue.ts';
import {
  instantOf,
  type ResolvedFilter,
  resolveFilter,
  type SmartViewQuery,
} from '../../tools/smart-views/query/filter-schema.ts';
import type { TaskRow } from '../../tools/tasks/tables.ts';

export interface EvaluationData {
  leads: readonly Pick<
    LeadRow,
    | 'id'
    | 'name'
    | 'description'
    | 'url'
    | 'status'
    | 'ownerId'
    | 'tags'
    | 'custom'
    | 'createdAt'
    | 'updatedAt'
    | 'convertedAt'
    | 'deletedAt'
  >[];
  contacts: readonly Pick<ContactRow, 'leadId' | 'name' | 'title' | 'emails' | 'phones' | 'deletedAt'>[];
  opportunities: readonly Pick<
    OpportunityRow,
    | 'leadId'
    | 'status'
    | 'value'
    | 'confidence'
    | 'currency'
    | 'pipelineStage'
    | 'expectedCloseDate'
    | 'ownerId'
    | 'note'
    | 'deletedAt'
  >[];
  tasks: readonly Pick<TaskRow, 'leadId' | 'text' | 'dueAt' | 'isComplete' | 'assignedTo' | 'deletedAt'>[];
  activities: readonly Pick<
    ActivityRow,
    | 'leadId'
    | 'type'
    | 'customActivityTypeId'
    | 'occurredAt'
    | 'userId'
    | 'contactId'
    | 'fields'
    | 'deletedAt'
  >[];
}

const NEGATES: Partial<Record<Op, Op>> = { neq: 'eq', not_contains: 'contains', not_in: 'in' };

const lower = (s: string) => s.toLowerCase();

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function asText(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function textMatches(v: string | null, op: Op, value: unknown): boolean {
  if (op === 'is_empty') return v === null || v === '';
  if (v === null) return false;
  switch (op) {
    case 'eq':
      return lower(v) === lower(String(value));
    case 'contains':
      return lower(v).includes(lower(String(value)));
    case 'starts_with':
      return lower(v).startsWith(lower(String(value)));
    case 'in':
      return list(value).some((x) => lower(String(x)) === lower(v));
    default:
      throw new Error(`op ${op} on text`);
  }
}

/** Comparable form of a scalar: numbers, epoch milliseconds, date strings, booleans, ids. */
function comparable(kind: FieldKind, v: unknown): number | string | boolean | null {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'number':
      return Number(v);
    case 'timestamp':
      return v instanceof Date ? v.getTime() : Date.parse(instantOf(String(v)));
    case 'boolean':
      return v === true;
    default:
      return String(v);
  }
}

function scalarMatches(kind: FieldKind, raw: unknown, op: Op, value: unknown): boolean {
  const v = comparable(kind, raw);
  if (op === 'is_empty') return v === null || (kind === 'id' && v === '');
  if (v === null) return false;
  const x = (y: unknown) => comparable(kind, y) ?? Number.NaN;
  switch (op) {
    case 'eq':
      return v === x(value);
    case 'gt':
      return v > x(value);
    case 'gte':
      return v >= x(value);
    case 'lt':
      return v < x(value);
    case 'lte':
      return v <= x(value);
    case 'between': {
      const [low, high] = list(value);
      return v >= x(low) && v <= x(high);
    }
    case 'in':
      return list(value).some((y) => v === x(y));
    default:
      throw new Error(`op ${op} on ${kind}`);
  }
}

function jsonMatches(j: unknown, op: Op, value: unknown): boolean {
  const str = typeof j === 'string' ? j : null;
  const num = typeof j === 'number' ? j : null;
  switch (op) {
    case 'eq':
      if (typeof value === 'boolean') return j === value;
      if (typeof value === 'number') return num !== null && num === value;
      return textMatches(str, 'eq', value);
    case 'contains':
    case 'starts_with':
      return textMatches(str, op, value);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
    case 'between':
      return scalarMatches('number', num, op, value);
    case 'in':
      return list(value).some((x) =>
        typeof x === 'string' ? textMatches(str, 'eq', x) : num !== null && num === x,
      );
    case 'is_empty':
      return j === undefined || j === null || j === '';
    default:
      throw new Error(`op ${op} on json`);
  }
}

/** Does a value of `kind` satisfy `op`? Negative ops and is_not_empty are the negation of the positive op. */
function valueMatches(kind: FieldKind, v: unknown, op: Op, value: unknown): boolean {
  const positive = NEGATES[op] ?? (op === 'is_not_empty' ? 'is_empty' : null);
  if (positive !== null) return !valueMatches(kind, v, positive, value);
  switch (kind) {
    case 'text':
    case 'keyword':
      return textMatches(asText(v), op, value);
    case 'json':
      return jsonMatches(v, op, value);
    case 'tags': {
      const tags = list(v).map(String);
      if (op === 'is_empty') return tags.length === 0;
      const wanted = op === 'in' ? list(value).map(String) : [String(value)];
      return tags.some((t) => wanted.includes(t));
    }
    case 'text_list': {
      const texts = list(v).map(asText);
      if (op === 'is_empty') return !texts.some((s) => s !== null && s !== '');
      return texts.some((s) => textMatches(s, op, value));
    }
    default:
      return scalarMatches(kind, v, op, value);
  }
}

function kindOf(f: ResolvedFilter): FieldKind {
  if (f.kind === null) throw new Error('filter without a field kind');
  return f.kind;
}

type Lead = EvaluationData['leads'][number];

function leadValue(lead: Lead, field: string): unknown {
  const values: Record<string, unknown> = {
    name: lead.name,
    description: lead.description,
    url: lead.url,
    status: lead.status,
    owner_id: lead.ownerId,
    tags: lead.tags,
    created_at: lead.createdAt,
    updated_at: lead.updatedAt,
    converted_at: lead.convertedAt,
  };
  return values[field];
}

function contactValue(c: EvaluationData['contacts'][number], field: string): unknown {
  if (field === 'email') return c.emails.map((e) => e.email);
  if (field === 'phone') return c.phones.map((p) => p.phone);
  return field === 'name' ? c.name : c.title;
}

function opportunityValue(o: EvaluationData['opportunities'][number], field: string): unknown {
  const values: Record<string, unknown> = {
    status: o.status,
    value: o.value,
    confidence: o.confidence,
    currency: o.currency,
    pipeline_stage: o.pipelineStage,
    expected_close_date: o.expectedCloseDate,
    owner_id: o.ownerId,
    note: o.note,
  };
  return values[field];
}

function taskValue(t: EvaluationData['tasks'][number], field: string): unknown {
  const values: Record<string, unknown> = {
    text: t.text,
    due_at: t.dueAt,
    is_complete: t.isComplete,
    assigned_to: t.assignedTo,
  };
  return values[field];
}

function activityValue(a: EvaluationData['activities'][number], field: string): unknown {
  if (field === 'occurred_at') return a.occurredAt;
  if (field === 'user_id') return a.userId;
  if (field === 'contact_id') return a.contactId;
  return Object.hasOwn(a.fields, field) ? a.fields[field] : undefined;
}

function activityOfType(a: EvaluationData['activities'][number], type: string): boolean {
  return BUILT_IN_ACTIVITY_TYPES.some((t) => t === type)
    ? a.type === type
    : a.type === 'custom' && a.customActivityTypeId === type;
}

function filterMatches(f: ResolvedFilter, lead: Lead, data: EvaluationData): boolean {
  const field = f.field ?? '';
  const live = <R extends { leadId: string | null; deletedAt: Date | null }>(rows: readonly R[]) =>
    rows.filter((r) => r.leadId === lead.id && r.deletedAt === null);
  switch (f.fieldType) {
    case 'lead':
      return valueMatches(kindOf(f), leadValue(lead, field), f.op, f.value);
    case 'custom_field':
      return valueMatches(
        'json',
        Object.hasOwn(lead.custom, field) ? lead.custom[field] : undefined,
        f.op,
        f.value,
      );
    case 'contact':
      return live(data.contacts).some((c) => valueMatches(kindOf(f), contactValue(c, field), f.op, f.value));
    case 'opportunity':
      return live(data.opportunities).some((o) =>
        valueMatches(kindOf(f), opportunityValue(o, field), f.op, f.value),
      );
    case 'task':
      return live(data.tasks).some((t) => valueMatches(kindOf(f), taskValue(t, field), f.op, f.value));
    case 'activity': {
      const ofType = live(data.activities).filter((a) => activityOfType(a, f.activityType ?? ''));
      if (f.field === null) return f.op === 'is_empty' ? ofType.length === 0 : ofType.length > 0;
      return ofType.some((a) => valueMatches(kindOf(f), activityValue(a, field), f.op, f.value));
    }
  }
}

/** Ids of the live leads matching a validated query, by the documented semantics. */
export function evaluateSmartViewQuery(query: SmartViewQuery, data: EvaluationData): Set<string> {
  const filters = query.filters.map(resolveFilter);
  const matches = new Set<string>();
  for (const lead of data.leads) {
    if (lead.deletedAt !== null) continue;
    const results = filters.map((f) => filterMatches(f, lead, data));
    const ok =
      filters.length === 0 || (query.logic === 'or' ? results.some(Boolean) : results.every(Boolean));
    if (ok) matches.add(lead.id);
  }
  return matches;
}
