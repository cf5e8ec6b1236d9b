import { DomainError, type DomainEvent, type ErrorType } from '@castie/contracts';
import type { Decider } from '../index.ts';
import { deepFreeze } from '../deep-freeze.ts';
import { expect } from 'vitest';

/**
 * given(events).when(command).then(events) for pure deciders (no mocks, no I/O):
 *
 *   spec(accountDecider).given([opened]).when({ type: 'NameProfile', ... }).then([named]);
 *   spec(accountDecider).given([]).when(...).thenFails('account_not_created');
 */
export function deciderSpec<C, E extends DomainEvent, S>(decider: Decider<C, E, S>) {
  return {
    given(events: readonly E[]) {
      // Frozen at every step, as CommandHandler hands states out: an evolve or decide that
      // changed a state in place fails here.
      const state = events.reduce((s, e) => deepFreeze(decider.evolve(s, e)), deepFreeze(decider.initialState()));
      return {
        state,
        when(command: C) {
          const run = () => decider.decide(command, state);
          return {
            then(expected: readonly E[]) {
              expect(run()).toEqual(expected);
            },
            thenNothing() {
              expect(run()).toEqual([]);
            },
            thenFails(errorType: ErrorType, message?: string | RegExp) {
              let thrown: unknown;
              try {
                run();
              } catch (error) {
                thrown = error;
              }
              expect(thrown, 'the command should be refused').toBeInstanceOf(DomainError);
              expect((thrown as DomainError).errorType).toBe(errorType);
              if (message) expect((thrown as DomainError).message).toMatch(message);
            },
          };
        },
      };
    },
  };
}
