import { DomainError, messages, type GroupEvent } from '@castie/contracts';
import type { Decider } from '@castie/platform';

/** What operators set on a group, at creation and by configuring it afterwards. */
export interface GroupSettings {
  groupName: string;
  groupInfoText: string;
  /** Relative path of the icon, '' when none. */
  groupIcon: string;
  requiresApproval: boolean;
  accessDeniedMessage: string;
  restrictCreation: boolean;
}
export const settingNames = ['groupName', 'groupInfoText', 'groupIcon', 'requiresApproval', 'accessDeniedMessage', 'restrictCreation'] as const satisfies readonly (keyof GroupSettings)[];

/**
 * One group, stream `group-<slug>`: created once (the stream can be created once, so the slug is
 * unique without a read-then-write race), then configured, and its admins and named creators.
 */
export type GroupState =
  | { status: 'none' }
  | ({
      status: 'created';
      slug: string;
      admins: readonly string[];
      creators: readonly string[];
    } & GroupSettings);

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
  /** Changes the settings given (bounded texts are checked at the edge, as at creation). */
  | ({ type: 'ConfigureGroup' } & Partial<GroupSettings>)
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
      case 'ConfigureGroup': {
        if (state.status !== 'created') throw notFound();
        const given = settingNames.filter((name) => command[name] !== undefined);
        if (given.length === 0) throw new DomainError('missing_request_data', `send at least one of ${settingNames.join(', ')}`, { group_slug: state.slug });
        // Only what differs from the current settings is recorded; sending the same again is no change.
        const changed = Object.fromEntries(given.filter((name) => command[name] !== state[name]).map((name) => [name, command[name]])) as Partial<GroupSettings>;
        if (Object.keys(changed).length === 0) throw new DomainError('invalid_request', messages.nothingChanged, { group_slug: state.slug });
        return [{ type: 'GroupConfigured', data: { slug: state.slug, ...changed } }];
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
          groupInfoText: event.data.groupInfoText,
          groupIcon: event.data.groupIcon,
          requiresApproval: event.data.requiresApproval,
          accessDeniedMessage: event.data.accessDeniedMessage,
          restrictCreation: event.data.restrictCreation,
          admins: [],
          creators: [],
        };
      case 'GroupConfigured': {
        if (state.status !== 'created') return state;
        const { slug: _slug, ...changed } = event.data;
        return { ...state, ...Object.fromEntries(Object.entries(changed).filter(([, v]) => v !== undefined)) };
      }
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
