// Locks in the state machines: every declared move of every machine in STATE_MACHINES succeeds over REST and writes its event, every other move is the 400 invalid_transition envelope naming the field and changes nothing, and a bad declaration fails at definition.
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { outboxEvents } from '../../core/db/schema.ts';
import {
  checkMachineEvents,
  defineStateMachine,
  describeMoves,
  type StateMachine,
} from '../../core/state-machine.ts';
import { CATALOGUE, STATE_MACHINES } from '../../tools/index.ts';
import { fileTest } from '../fixtures/file-test.ts';
import type { MachineDriver, MachineKit } from '../fixtures/kit.ts';
import { loadKits } from '../fixtures/load-kits.ts';
import { json, type TestContext, type TestOrg } from '../helpers.ts';

const KITS = await loadKits();

/** Each machine's kit entry by its resource (test/<area>/kit.ts `machines`); a machine without one fails below. */
const MACHINE_KITS = new Map<string, MachineKit>();
for (const kit of KITS) {
  for (const [resource, machine] of Object.entries(kit.machines ?? {})) {
    if (MACHINE_KITS.has(resource)) throw new Error(`Two kits drive the ${resource} state machine`);
    MACHINE_KITS.set(resource, machine);
  }
}

function kitOf(machine: StateMachine): MachineKit {
  const kit = MACHINE_KITS.get(machine.resource);
  if (!kit)
    throw new Error(`no test kit drives the ${machine.resource} state machine (test/<area>/kit.ts machines)`);
  return kit;
}

// pro: estimates need the plan feature `estimates`, the project machine's routes `projects`.
const test = fileTest({ options: { withoutRateLimits: true }, plan: 'pro' }).extend(
  'driverOf',
  { scope: 'file' },
  async ({ t, org }, { onCleanup }) => {
    // The drivers, built once per machine for this file's app and organization.
    const drivers = new Map<string, MachineDriver>();
    onCleanup(async () => {
      for (const driver of drivers.values()) await driver.close?.();
    });
    return (machine: StateMachine): MachineDriver => {
      let driver = drivers.get(machine.resource);
      if (!driver) {
        driver = kitOf(machine).driver({ t, org });
        drivers.set(machine.resource, driver);
      }
      return driver;
    };
  },
);

/** The outbox events of one record, oldest first. */
async function eventsOf(t: TestContext, org: TestOrg, id: string): Promise<string[]> {
  const rows = await t.services.db.system
    .select({ event: outboxEvents.event })
    .from(outboxEvents)
    .where(and(eq(outboxEvents.orgId, org.orgId), sql`${outboxEvents.data}->>'_id' = ${id}`))
    .orderBy(outboxEvents.createdAt, outboxEvents.id);
  return rows.map((r) => r.event);
}

/** The shortest chain of allowed moves from the initial state to `target` (breadth first). */
function pathTo(machine: StateMachine, target: string): string[] {
  const previous = new Map<string, string | null>([[machine.initial, null]]);
  const queue = [machine.initial];
  for (let state = queue.shift(); state !== undefined; state = queue.shift()) {
    for (const next of machine.allowedFrom(state)) {
      if (previous.has(next)) continue;
      previous.set(next, state);
      queue.push(next);
    }
  }
  if (!previous.has(target))
    throw new Error(`${machine.resource}: ${target} is unreachable from ${machine.initial}`);
  const path: string[] = [];
  for (
    let state: string | null | undefined = target;
    state !== machine.initial;
    state = previous.get(state)
  ) {
    if (state === null || state === undefined) break;
    path.unshift(state);
  }
  return path;
}

/** A new record of the machine brought to `state` through REST moves. */
async function recordIn(driver: MachineDriver, machine: StateMachine, state: string): Promise<string> {
  const id = await driver.create();
  for (const step of pathTo(machine, state))
    expect([200, 201]).toContain((await driver.move(id, step)).status);
  expect(driver.stateOf(await driver.read(id))).toBe(state);
  return id;
}

/** Events any move of the machine emits: the ones a move must not write unless it is its own. */
function moveEvents(machine: StateMachine): Set<string> {
  const events = new Set<string>();
  for (const from of machine.states) {
    for (const to of machine.allowedFrom(from)) {
      const event = machine.eventOf(from, to);
      if (event !== null) events.add(event);
    }
  }
  return events;
}

const pairs = (machine: StateMachine) =>
  machine.states.flatMap((from) => machine.states.filter((to) => to !== from).map((to) => ({ from, to })));

describe.each(STATE_MACHINES.map((machine) => ({ name: machine.resource, machine })))(
  'the $name state machine over REST',
  ({ machine }) => {
    const allowed = pairs(machine).filter(({ from, to }) => machine.allowedFrom(from).includes(to));
    const refused = pairs(machine).filter(
      ({ from, to }) => !machine.allowedFrom(from).includes(to) && !kitOf(machine).jobOnly?.includes(to),
    );

    test('has a REST driver whose moves send the field the machine names', () => {
      expect(kitOf(machine).field).toBe(machine.field);
    });

    test.for(allowed)(
      'moves $from -> $to and writes its event',
      async ({ from, to }, { t, org, driverOf }) => {
        const driver = driverOf(machine);
        const id = await recordIn(driver, machine, from);
        const before = (await eventsOf(t, org, id)).length;
        const res = await driver.move(id, to);
        // 201 where the move records something new (an invoice payment).
        expect([200, 201]).toContain(res.status);
        expect(driver.stateOf(await driver.read(id))).toBe(to);
        const written = (await eventsOf(t, org, id)).slice(before);
        const event = machine.eventOf(from, to);
        expect(written.filter((e) => moveEvents(machine).has(e))).toEqual(event === null ? [] : [event]);
      },
    );

    test.for(refused)(
      'refuses $from -> $to with the 400 envelope and changes nothing',
      async ({ from, to }, { t, org, driverOf }) => {
        const driver = driverOf(machine);
        const id = await recordIn(driver, machine, from);
        const before = { record: await driver.read(id), events: await eventsOf(t, org, id) };
        const res = await driver.move(id, to);
        expect(res.status).toBe(400);
        const message = `${from} -> ${to} is not allowed; allowed: ${machine.allowedFrom(from).join(', ') || 'none'}`;
        expect(await json(res)).toEqual({
          error: 'Invalid transition',
          code: 'invalid_transition',
          message,
          details: [{ field: machine.field, message, code: 'invalid_transition' }],
        });
        expect(await driver.read(id)).toEqual(before.record);
        expect(await eventsOf(t, org, id)).toEqual(before.events);
      },
    );

    test.for(machine.states.filter((state) => !kitOf(machine).noSameState?.includes(state)))(
      'accepts the same-state move %s -> %s as a no-op without an event',
      async (state, { t, org, driverOf }) => {
        const driver = driverOf(machine);
        const id = await recordIn(driver, machine, state);
        const events = await eventsOf(t, org, id);
        expect((await driver.move(id, state)).status).toBe(200);
        expect(driver.stateOf(await driver.read(id))).toBe(state);
        expect(await eventsOf(t, org, id)).toEqual(events);
      },
    );
  },
);

describe('the declared machines', () => {
  test('are the ones the kits drive, each with the moves its kit documents', () => {
    expect(STATE_MACHINES.map((m) => m.resource).sort()).toEqual([...MACHINE_KITS.keys()].sort());
    for (const machine of STATE_MACHINES) {
      expect(`${machine.resource}: ${describeMoves(machine)}`).toBe(
        `${machine.resource}: ${kitOf(machine).moves}`,
      );
    }
  });

  test('reach every state from the initial one', () => {
    for (const machine of STATE_MACHINES) {
      for (const state of machine.states) expect(() => pathTo(machine, state)).not.toThrow();
    }
  });
});

describe('defineStateMachine', () => {
  // The states of the next issue's invoices: a worked example of a machine with final states.
  const invoice = defineStateMachine({
    resource: 'invoice',
    field: 'status',
    states: ['draft', 'open', 'paid', 'void', 'uncollectible'],
    initial: 'draft',
    moves: {
      draft: { open: null },
      open: { paid: 'invoice.paid', void: null, uncollectible: null },
      uncollectible: { paid: 'invoice.paid', void: null },
    },
  });

  test('answers allowedFrom, eventOf and assertMove from the declaration', () => {
    expect(invoice.allowedFrom('open')).toEqual(['paid', 'void', 'uncollectible']);
    expect(invoice.allowedFrom('paid')).toEqual([]);
    expect(invoice.eventOf('open', 'paid')).toBe('invoice.paid');
    expect(invoice.eventOf('draft', 'open')).toBeNull();
    expect(invoice.eventOf('paid', 'paid')).toBeNull();
    expect(() => invoice.assertMove('void', 'void')).not.toThrow();
    expect(() => invoice.eventOf('paid', 'open')).toThrow('paid -> open is not allowed; allowed: none');
    expect(() => invoice.assertMove('draft', 'paid')).toThrow('draft -> paid is not allowed; allowed: open');
    expect(invoice.isState('paid')).toBe(true);
    expect(invoice.isState('sent')).toBe(false);
    expect(describeMoves(invoice)).toBe(
      'draft -> open; open -> paid (invoice.paid), void, uncollectible; paid (final); void (final); ' +
        'uncollectible -> paid (invoice.paid), void',
    );
  });

  // Declarations typed with plain strings get past the compiler; the definition check still refuses them.
  const states: string[] = ['a', 'b'];

  test('throws on an unknown state in moves, on either side', () => {
    expect(() =>
      defineStateMachine({ resource: 'x', field: 'status', states, initial: 'a', moves: { a: { c: null } } }),
    ).toThrow('state machine x: moves a to unknown state c');
    expect(() =>
      defineStateMachine({ resource: 'x', field: 'status', states, initial: 'a', moves: { c: { a: null } } }),
    ).toThrow('state machine x: moves from unknown state c');
  });

  test('throws on a same-state move, an unknown initial state and duplicate or missing states', () => {
    expect(() =>
      defineStateMachine({ resource: 'x', field: 'status', states, initial: 'a', moves: { a: { a: null } } }),
    ).toThrow('declares the same-state move a -> a');
    expect(() =>
      defineStateMachine({ resource: 'x', field: 'status', states, initial: 'c', moves: {} }),
    ).toThrow('initial state c is not one of its states');
    expect(() =>
      defineStateMachine({ resource: 'x', field: 'status', states: ['a', 'a'], initial: 'a', moves: {} }),
    ).toThrow('declares a state twice');
    expect(() =>
      defineStateMachine({
        resource: 'x',
        field: 'status',
        states: states.slice(2),
        initial: 'a',
        moves: {},
      }),
    ).toThrow('declares no state');
  });

  test('refuses an event outside the catalogue, in the types and when the catalogue is collected', () => {
    const machine = defineStateMachine({
      resource: 'x',
      field: 'status',
      states: ['a', 'b'],
      initial: 'a',
      // @ts-expect-error: invoice.refunded is not in core/events.ts's catalogue
      moves: { a: { b: 'invoice.refunded' } },
    });
    expect(() => checkMachineEvents([machine], CATALOGUE.eventNames)).toThrow(
      'move a -> b emits invoice.refunded, outside the catalogue',
    );
    expect(() => checkMachineEvents(STATE_MACHINES, CATALOGUE.eventNames)).not.toThrow();
  });

  test('refuses unknown literal states in the types', () => {
    expect(() =>
      defineStateMachine({
        resource: 'x',
        field: 'status',
        states: ['a', 'b'],
        initial: 'a',
        // @ts-expect-error: c is not one of the declared states
        moves: { a: { c: null } },
      }),
    ).toThrow('moves a to unknown state c');
    expect(() =>
      defineStateMachine({
        resource: 'x',
        field: 'status',
        states: ['a'],
        // @ts-expect-error: the initial state must be one of the states too
        initial: 'z',
        moves: {},
      }),
    ).toThrow('initial state z');
  });
});
