import { DomainError, messages, type GroupEvent } from '@castie/contracts';
import type { Decider } from '@castie/platform';

/**
 * One group, stream `group-<slug>`: created once (the stream can be created once, so the slug is
 * unique without a read-then-write race), then its admins and named creators.
 */
export type GroupState =
  | { status: 'none' }
  | {
      status: 'created';
      slug: string;
      groupName: string;
      requiresApproval: boolean;
      restrictCreation: boolean;
      admins: readonly string[];
      creators: readonly string[];
    };

export type GroupCommand =
  | {
      type: 'CreateGroup';
      slug: string;
      groupName: string;
      groupInfoText: string;
      groupIcon: string;
      requiresApproval: boolean;
      accessDeniedMessage: string;
      restrictCreation: boolean;
    }
  | { type: 'NameAdmin'; userId: string }
  | { type: 'NameCreator'; userId: string };

export const groupStreamId = (slug: string): string => `group-${slug}`;

const notFound = () => new DomainError('object_not_found', messages.groupNotFound);

export const groupDecider: Decider<GroupCommand, GroupEvent, GroupState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'CreateGroup': {
        if (state.status !== 'none') throw new DomainError('invalid_request', `a group with the slug ${state.slug} already exists`, { group_slug: state.slug });
        const { type: _type, ...data } = command;
        return [{ type: 'GroupCreated', data }];
      }
      case 'NameAdmin':
        if (state.status !== 'created') throw notFound();
        // Naming someone again changes nothing (operators may repeat a call safely).
        return state.admins.includes(command.userId) ? [] : [{ type: 'GroupAdminNamed', data: { slug: state.slug, userId: command.userId } }];
      case 'NameCreator':
        if (state.status !== 'created') throw notFound();
        return state.creators.includes(command.userId) ? [] : [{ type: 'GroupCreatorNamed', data: { slug: state.slug, userId: command.userId } }];
      default: {
        const unknown: never = command;
        throw new Error(`unknown command ${JSON.stringify(unknown)}`);
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'GroupCreated':
        return {
          status: 'created',
          slug: event.data.slug,
          groupName: event.data.groupName,
          requiresApproval: event.data.requiresApproval,
          restrictCreation: event.data.restrictCreation,
          admins: [],
          creators: [],
        };
      case 'GroupAdminNamed':
        return state.status === 'created' ? { ...state, admins: [...state.admins, event.data.userId] } : state;
      case 'GroupCreatorNamed':
        return state.status === 'created' ? { ...state, creators: [...state.creators, event.data.userId] } : state;
      // Membership events live in their own streams.
      case 'GroupFollowed':
      case 'GroupAccessRequested':
      case 'GroupAccessGranted':
      case 'GroupAccessDenied':
      case 'GroupUnfollowed':
        return state;
      default: {
        const unknown: never = event;
        throw new Error(`unknown event ${JSON.stringify(unknown)}`);
      }
    }
  },
};
