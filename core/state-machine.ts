// State machines: one declaration per status field says which moves are allowed and which event
// each move emits; every other move is the 400 `invalid_transition` of docs/contracts.md "Consistency rules".
// Areas declare their machine next to their table and list it in tools/index.ts (STATE_MACHINES),
// so the docs and the tests walk every machine without a hand-kept list.
//
// Same-state "moves" (won -> won, complete -> complete) are not moves: they are always accepted,
// emit nothing and may not be declared. Retrying a completion or resending the current status is
// then safe, as it was before the machines existed.
//
// The machine also owns its status type: `schema` is the zod enum of its states (for record
// shapes and filters), `parse` reads a stored status (an unknown one is a fault, never a silent
// fallback to the initial state), and `refuse` is the one place an area's own refusal (a rule
// beyond the move table, such as "already paid in full") becomes the 400 `invalid_transition`.
import { z } from 'zod';
import { AppError } from './errors.ts';
import type { EventName } from './events.ts';

/** For each state, the states it may move to and the event of that move (null: no event of its own). */
export type MoveTable<S extends string> = {
  readonly [From in S]?: { readonly [To in Exclude<S, From>]?: EventName | null };
};

export interface StateMachineDefinition<S extends string> {
  /** What the machine is about, in the singular (`opportunity`, `task`): docs and test names. */
  readonly resource: string;
  /** The input field that carries the state, named in the error's `details`. */
  readonly field: string;
  readonly states: readonly S[];
  /** The state a new record starts in; creating it in another state is the move from this one. */
  readonly initial: NoInfer<S>;
  readonly moves: MoveTable<NoInfer<S>>;
}

export interface StateMachine<S extends string = string> {
  readonly resource: string;
  readonly field: string;
  readonly states: readonly S[];
  readonly initial: S;
  /** The states as a zod enum; the caller adds its own `.describe()`. */
  readonly schema: z.ZodEnum<{ [K in S]: K }>;
  /** Narrows a stored or sent value to a state of this machine. */
  isState(value: string): value is S;
  /**
   * A stored status as a state of this machine. A value outside the states is a fault of the data
   * (a hand-edited row, a state removed from the declaration): an Error, logged as a 500.
   */
  parse(stored: string): S;
  /** Throws the 400 `invalid_transition` naming the machine's field, with the area's own reason. */
  refuse(message: string): never;
  /** Throws the 400 `invalid_transition` unless `from -> to` is declared (or `from` is `to`). */
  assertMove(from: S, to: S): void;
  /** The event of an allowed move, null when it has none or `from` is `to`; throws like assertMove. */
  eventOf(from: S, to: S): EventName | null;
  /** The states `from` may move to, in declaration order of `states`. */
  allowedFrom(from: S): readonly S[];
}

/**
 * Checks a declaration and returns its machine. TypeScript already refuses an event outside the
 * catalogue and, with literal states, an unknown state in `moves`; the state checks run here so a
 * declaration built from wider types (or from JavaScript) fails when the module loads, not on the
 * first request. Its events are checked once the catalogue is collected (checkMachineEvents).
 */
export function defineStateMachine<const S extends string>(
  definition: StateMachineDefinition<S>,
): StateMachine<S> {
  const { resource, field, states, initial } = definition;
  const table = checkDefinition(definition);
  const isState = (value: string): value is S => (states as readonly string[]).includes(value);
  const allowedFrom = (from: S): readonly S[] => states.filter((to) => table.get(from)?.has(to) === true);

  const refuse = (message: string): never => {
    throw new AppError('invalid_transition', {
      message,
      details: [{ field, message, code: 'invalid_transition' }],
    });
  };
  const assertMove = (from: S, to: S): void => {
    if (from === to || table.get(from)?.has(to) === true) return;
    const allowed = allowedFrom(from);
    refuse(`${from} -> ${to} is not allowed; allowed: ${allowed.length > 0 ? allowed.join(', ') : 'none'}`);
  };

  return {
    resource,
    field,
    states,
    initial,
    schema: z.enum(states),
    isState,
    parse(stored) {
      if (isState(stored)) return stored;
      throw new Error(
        `${resource} ${field}: stored value ${JSON.stringify(stored)} is none of ${states.join(', ')}`,
      );
    },
    refuse,
    assertMove,
    eventOf(from, to) {
      assertMove(from, to);
      return table.get(from)?.get(to) ?? null;
    },
    allowedFrom,
  };
}

/**
 * The allowed moves in one line for a field description or a docs page, e.g.
 * `active -> won (opportunity.won), lost (opportunity.lost); won -> active`.
 */
export function describeMoves<S extends string>(machine: StateMachine<S>): string {
  return machine.states
    .map((from) => {
      const targets = machine.allowedFrom(from).map((to) => {
        const event = machine.eventOf(from, to);
        return event === null ? to : `${to} (${event})`;
      });
      return targets.length > 0 ? `${from} -> ${targets.join(', ')}` : `${from} (final)`;
    })
    .join('; ');
}

/** The moves as nested maps, after refusing unknown states and self-moves. */
function checkDefinition<S extends string>(
  definition: StateMachineDefinition<S>,
): Map<string, Map<string, EventName | null>> {
  const { resource, states, initial, moves } = definition;
  const fail = (problem: string): never => {
    throw new Error(`state machine ${resource}: ${problem}`);
  };
  const known = new Set<string>(states);
  if (states.length === 0) fail('declares no state');
  if (known.size !== states.length) fail('declares a state twice');
  if (!known.has(initial)) fail(`initial state ${initial} is not one of its states`);
  const table = new Map<string, Map<string, EventName | null>>();
  // Read with string keys, which is what lets these checks see undeclared states.
  const rows: Readonly<Partial<Record<string, Readonly<Partial<Record<string, EventName | null>>>>>> = moves;
  for (const [from, targets] of Object.entries(rows)) {
    if (!known.has(from)) fail(`moves from unknown state ${from}`);
    const row = new Map<string, EventName | null>();
    for (const [to, event] of Object.entries(targets ?? {})) {
      if (event === undefined) continue; // an optional key left out: no such move
      if (!known.has(to)) fail(`moves ${from} to unknown state ${to}`);
      if (to === from) fail(`declares the same-state move ${from} -> ${to}`);
      row.set(to, event);
    }
    table.set(from, row);
  }
  return table;
}

/**
 * Throws unless every event a machine's moves emit is in `events` (the catalogue's names, which
 * exist only once the areas are collected: tools/index.ts checks its machines when it loads).
 * TypeScript refuses such a move already; this is the same check for what the types let through.
 */
export function checkMachineEvents(machines: readonly StateMachine[], events: readonly string[]): void {
  for (const machine of machines) {
    for (const from of machine.states) {
      for (const to of machine.allowedFrom(from)) {
        const event = machine.eventOf(from, to);
        if (event !== null && !events.includes(event))
          throw new Error(
            `state machine ${machine.resource}: move ${from} -> ${to} emits ${event}, outside the catalogue`,
          );
      }
    }
  }
}
