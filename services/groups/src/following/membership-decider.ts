import { DomainError, type GroupAccess, type GroupEvent } from '@castie/contracts';
import type { Decider } from '@castie/platform';

/**
 * One user's follow of one group, stream `membership-<slug>-<userId>` (spec: Group access). The
 * states are the spec's (following, access) pairs that can occur:
 * none = (false, null), following = (true, null) on a public group or (true, granted) once an
 * approval-required group let the user in, pending = (false, pending).
 */
export type MembershipState = { status: 'none' } | { status: 'pending' } | { status: 'following'; access: 'granted' | null };

/** The group as the membership needs to know it: loaded from the group stream before deciding. */
export interface GroupFacts {
  slug: string;
  requiresApproval: boolean;
}

/** `handle` names the user in errors (improper_group_request carries handle and group_slug). */
export type MembershipCommand =
  | { type: 'Follow'; group: GroupFacts; userId: string; handle: string }
  | { type: 'Unfollow'; group: GroupFacts; userId: string; handle: string }
  /** Approval of a pending follow by an operator (`admin`) or a group admin (their user id). */
  | { type: 'GrantAccess'; group: GroupFacts; userId: string; handle: string; by: string }
  | { type: 'DenyAccess'; group: GroupFacts; userId: string; handle: string; by: string };

export const membershipStreamId = (slug: string, userId: string): string => `membership-${slug}-${userId}`;

/** The texts clients of the original app show (decisions.md). */
export const groupMessages = {
  alreadyFollowing: 'cannot follow the Group. user is already following',
  notFollowing: 'cannot un-follow the Group. user does not follow it yet',
  accessPending: 'user has requested access to group',
} as const;

/** (following, access) as the API shows a state. */
export function standing(state: MembershipState): { following: boolean; access: GroupAccess } {
  switch (state.status) {
    case 'none':
      return { following: false, access: null };
    case 'pending':
      return { following: false, access: 'pending' };
    case 'following':
      return { following: true, access: state.access };
    default: {
      const unknown: never = state;
      throw new Error(`unknown state ${JSON.stringify(unknown)}`);
    }
  }
}

const improper = (message: string, command: MembershipCommand) => new DomainError('improper_group_request', message, { handle: command.handle, group_slug: command.group.slug });

export const membershipDecider: Decider<MembershipCommand, GroupEvent, MembershipState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    const { slug } = command.group;
    const userId = command.userId;
    switch (command.type) {
      case 'Follow':
        if (state.status === 'following') throw improper(groupMessages.alreadyFollowing, command);
        // Asking again while the request waits changes nothing; the answer repeats it is pending.
        // Once the group no longer requires approval, asking again lets the person in (operators
        // grant what was pending when they opened the group; this covers any request left over).
        if (state.status === 'pending') return command.group.requiresApproval ? [] : [{ type: 'GroupFollowed', data: { slug, userId } }];
        return command.group.requiresApproval ? [{ type: 'GroupAccessRequested', data: { slug, userId } }] : [{ type: 'GroupFollowed', data: { slug, userId } }];

      case 'Unfollow':
        // (false, any): a pending request is not a follow either.
        if (state.status !== 'following') throw improper(groupMessages.notFollowing, command);
        return [{ type: 'GroupUnfollowed', data: { slug, userId } }];

      case 'GrantAccess':
      case 'DenyAccess':
        if (state.status === 'following') throw improper(`${command.handle} already follows the group`, command);
        if (state.status === 'none') throw improper(`${command.handle} has not requested access to the group`, command);
        return command.type === 'GrantAccess'
          ? [{ type: 'GroupAccessGranted', data: { slug, userId, grantedBy: command.by } }]
          : [{ type: 'GroupAccessDenied', data: { slug, userId, deniedBy: command.by } }];

      default: {
        const unknown: never = command;
        throw new Error(`unknown command ${JSON.stringify(unknown)}`);
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'GroupFollowed':
        return { status: 'following', access: null };
      case 'GroupAccessRequested':
        return { status: 'pending' };
      case 'GroupAccessGranted':
        return { status: 'following', access: 'granted' };
      case 'GroupAccessDenied':
      case 'GroupUnfollowed':
        return { status: 'none' };
      // Group configuration lives in the group stream.
      case 'GroupCreated':
      case 'GroupConfigured':
      case 'GroupAdminNamed':
      case 'GroupCreatorNamed':
        return state;
      default: {
        const unknown: never = event;
        throw new Error(`unknown event ${JSON.stringify(unknown)}`);
      }
    }
  },
};
