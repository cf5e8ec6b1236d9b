import { DomainError, messages, type LoginEvent } from '@castie/contracts';
import type { Decider } from '@castie/platform';

/**
 * A handle's claim, stream `handle-<lowercased handle>`: handles are unique regardless of case.
 * A deleted account keeps its claim (its handle stays reserved); an abandoned sign-up or a
 * changed handle releases it.
 */
export type HandleClaimState = { status: 'free' } | { status: 'claimed'; userId: string; handle: string };

export type HandleClaimCommand = { type: 'ClaimHandle'; userId: string; handle: string } | { type: 'ReleaseHandle'; userId: string };

type HandleEvent = Extract<LoginEvent, { type: 'HandleClaimed' | 'HandleReleased' }>;

export const handleStreamId = (handle: string): string => `handle-${handle.toLowerCase()}`;

export const handleClaimDecider: Decider<HandleClaimCommand, HandleEvent, HandleClaimState> = {
  initialState: () => ({ status: 'free' }),

  decide(command, state) {
    switch (command.type) {
      case 'ClaimHandle':
        if (state.status === 'claimed') {
          if (state.userId !== command.userId) throw new DomainError('handle_not_unique', messages.handleNotUnique);
          if (state.handle === command.handle) return [];
        }
        return [{ type: 'HandleClaimed', data: { userId: command.userId, handle: command.handle } }];
      case 'ReleaseHandle':
        return state.status === 'claimed' && state.userId === command.userId ? [{ type: 'HandleReleased', data: { userId: command.userId } }] : [];
      default: {
        const unknown: never = command;
        throw new Error(`unknown command ${JSON.stringify(unknown)}`);
      }
    }
  },

  evolve(_state, event) {
    switch (event.type) {
      case 'HandleClaimed':
        return { status: 'claimed', userId: event.data.userId, handle: event.data.handle };
      case 'HandleReleased':
        return { status: 'free' };
      default: {
        const unknown: never = event;
        throw new Error(`unknown event ${JSON.stringify(unknown)}`);
      }
    }
  },
};
