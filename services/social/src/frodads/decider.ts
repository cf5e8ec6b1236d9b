import { DomainError, type SocialEvent } from '@castie/contracts';
import type { Decider } from '@castie/platform';

/**
 * What two people are to each other, stream `frodads-<a>-<b>` (ids sorted): both sides of a
 * friendship write to one stream, so requests crossing each other, or an accept racing an
 * unfrodad, are serialized by its optimistic concurrency.
 */
export type FriendshipState =
  | { status: 'none' }
  | { status: 'requested'; fromId: string; toId: string }
  | { status: 'friends'; users: [string, string] };

/** Handles travel with the commands only to word the refusals. */
export type FriendshipCommand =
  | { type: 'RequestFrodad'; fromId: string; toId: string }
  | { type: 'RespondToRequest'; byId: string; fromId: string; fromHandle: string; accept: boolean }
  | { type: 'RemoveFrodad'; byId: string; otherId: string; otherHandle: string };

export const frodadsStreamId = (a: string, b: string): string => `frodads-${[a, b].sort().join('-')}`;

/** The texts of the original app (decisions.md). */
export const frodadMessages = {
  requested: 'friend request sent',
  accepted: (handle: string) => `you and ${handle} are now frodads`,
  rejected: (handle: string) => `frodad request from ${handle} has been rejected`,
  removed: (handle: string) => `${handle} has been unfriended`,
  pending: 'friend request is already pending',
  alreadyFriends: 'these Users are already friends',
  yourself: 'cannot frodad request yourself',
} as const;

const cannotAdd = (message: string) => new DomainError('cannot_add_frodad', message);
const improper = (message: string) => new DomainError('improper_frodad_response', message);

export const friendshipDecider: Decider<FriendshipCommand, SocialEvent, FriendshipState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'RequestFrodad': {
        const { fromId, toId } = command;
        if (fromId === toId) throw cannotAdd(frodadMessages.yourself);
        switch (state.status) {
          case 'none':
            return [{ type: 'FrodadRequested', data: { fromId, toId } }];
          case 'requested':
            if (state.fromId === fromId) throw cannotAdd(frodadMessages.pending);
            // The other side asked first: asking back means yes (services/social/README.md).
            return [{ type: 'FrodadRequestAccepted', data: { fromId: state.fromId, toId: fromId } }];
          case 'friends':
            throw cannotAdd(frodadMessages.alreadyFriends);
          default:
            return unreachable(state);
        }
      }

      case 'RespondToRequest': {
        const { byId, fromId, fromHandle } = command;
        if (state.status === 'friends') throw improper(`you and ${fromHandle} are already frodads`);
        if (state.status === 'requested' && state.fromId === byId) throw improper(`your own request to ${fromHandle} is waiting for their answer`);
        if (state.status !== 'requested' || state.fromId !== fromId || state.toId !== byId) throw improper(`there is no pending frodad request from ${fromHandle}`);
        return [{ type: command.accept ? 'FrodadRequestAccepted' : 'FrodadRequestRejected', data: { fromId, toId: byId } }];
      }

      case 'RemoveFrodad': {
        const { byId, otherId, otherHandle } = command;
        if (state.status !== 'friends' || byId === otherId || !state.users.includes(byId) || !state.users.includes(otherId)) {
          throw improper(`you and ${otherHandle} are not frodads`);
        }
        return [{ type: 'FrodadRemoved', data: { byId, otherId } }];
      }

      default:
        return unreachable(command);
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'FrodadRequested':
        return { status: 'requested', fromId: event.data.fromId, toId: event.data.toId };
      case 'FrodadRequestAccepted':
        return { status: 'friends', users: [event.data.fromId, event.data.toId].sort() as [string, string] };
      case 'FrodadRequestRejected':
      case 'FrodadRemoved':
        return { status: 'none' };
      default:
        return unreachable(event);
    }
  },
};

function unreachable(value: never): never {
  throw new Error(`unhandled ${JSON.stringify(value)}`);
}
