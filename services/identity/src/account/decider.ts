import { DomainError, type IdentityEvent } from '@castie/contracts';
import type { Decider } from '@castie/platform';

/**
 * An account's life, stream `account-<userId>` (public topic `identity`): opened at the password
 * step, named at the handle step, active once the picture step completes sign-up; then deleted,
 * or abandoned before it was complete.
 */
export type AccountState =
  | { status: 'none' }
  | { status: 'opened'; userId: string }
  | { status: 'named'; userId: string; handle: string; firstName: string; lastName: string }
  | ({ status: 'active' } & Profile)
  | { status: 'deleted'; userId: string; handle: string | null }
  | { status: 'abandoned'; userId: string };

export interface Profile {
  userId: string;
  handle: string;
  firstName: string;
  lastName: string;
  city: string;
  state: string;
  /** Relative path of the picture, '' when none. */
  profPic: string;
  imageUpdatedAt: string | null;
  isPrivate: boolean;
}

/** The editable fields, by the names the API uses for them. */
export type ProfileChanges = Partial<Pick<Profile, 'handle' | 'firstName' | 'lastName' | 'city' | 'state'>>;

export type AccountCommand =
  | { type: 'OpenAccount'; userId: string }
  | { type: 'NameProfile'; handle: string; firstName: string; lastName: string }
  | { type: 'CompleteSignUp'; handle: string; profPic: string; now: Date }
  | { type: 'EditProfile'; changes: ProfileChanges; profPic: string | null; now: Date }
  | { type: 'SetPrivacy'; isPrivate: boolean }
  | { type: 'DeleteAccount' }
  | { type: 'AbandonSignUp' };

const notCreated = (message: string) => new DomainError('account_not_created', message);

function requireActive(state: AccountState): Extract<AccountState, { status: 'active' }> {
  if (state.status === 'active') return state;
  if (state.status === 'deleted') throw new DomainError('inactive_user', 'the profile you requested is not active');
  throw new DomainError('object_not_found', 'the requested user could not be found');
}

export const accountDecider: Decider<AccountCommand, IdentityEvent, AccountState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'OpenAccount':
        if (state.status !== 'none') throw notCreated('this account already exists');
        return [{ type: 'AccountOpened', data: { userId: command.userId } }];

      case 'NameProfile':
        if (state.status !== 'opened' && state.status !== 'named') {
          throw notCreated(state.status === 'none' ? 'create the account with a password first' : 'the sign-up of this account is already complete');
        }
        return [{ type: 'ProfileNamed', data: { userId: state.userId, handle: command.handle, firstName: command.firstName, lastName: command.lastName } }];

      case 'CompleteSignUp':
        if (state.status === 'opened') throw notCreated('choose a handle first');
        if (state.status !== 'named') throw notCreated(state.status === 'none' ? 'create the account with a password first' : 'the sign-up of this account is already complete');
        if (state.handle.toLowerCase() !== command.handle.toLowerCase()) throw notCreated('the handle does not belong to this e-mail address');
        return [
          { type: 'SignUpCompleted', data: { userId: state.userId, profPic: command.profPic } },
          ...(command.profPic ? [{ type: 'ProfilePictureChanged' as const, data: { userId: state.userId, profPic: command.profPic, changedAt: command.now.toISOString() } }] : []),
        ];

      case 'EditProfile': {
        const profile = requireActive(state);
        const changed: ProfileChanges = {};
        for (const [field, value] of Object.entries(command.changes) as [keyof ProfileChanges, string | undefined][]) {
          if (value !== undefined && value !== profile[field]) changed[field] = value;
        }
        const events: IdentityEvent[] = [];
        if (Object.keys(changed).length > 0) events.push({ type: 'ProfileEdited', data: { userId: profile.userId, ...changed } });
        // A sent picture always replaces the current one (spec).
        if (command.profPic) events.push({ type: 'ProfilePictureChanged', data: { userId: profile.userId, profPic: command.profPic, changedAt: command.now.toISOString() } });
        return events;
      }

      case 'SetPrivacy': {
        const profile = requireActive(state);
        return profile.isPrivate === command.isPrivate ? [] : [{ type: 'PrivacyChanged', data: { userId: profile.userId, isPrivate: command.isPrivate } }];
      }

      case 'DeleteAccount': {
        const profile = requireActive(state);
        return [{ type: 'AccountDeleted', data: { userId: profile.userId, handle: profile.handle } }];
      }

      case 'AbandonSignUp':
        if (state.status === 'active') throw new DomainError('not_allowed', 'this account is complete: sign in to delete it');
        if (state.status !== 'opened' && state.status !== 'named') return [];
        return [{ type: 'SignUpAbandoned', data: { userId: state.userId } }];

      default: {
        const unknown: never = command;
        throw new Error(`unknown command ${JSON.stringify(unknown)}`);
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'AccountOpened':
        return { status: 'opened', userId: event.data.userId };
      case 'ProfileNamed':
        return { status: 'named', userId: event.data.userId, handle: event.data.handle, firstName: event.data.firstName, lastName: event.data.lastName };
      case 'SignUpCompleted':
        if (state.status !== 'named') return state;
        return { ...state, status: 'active', city: '', state: '', profPic: event.data.profPic, imageUpdatedAt: null, isPrivate: false };
      case 'ProfileEdited': {
        if (state.status !== 'active') return state;
        const { userId: _userId, ...changes } = event.data;
        return { ...state, ...changes };
      }
      case 'ProfilePictureChanged':
        return state.status === 'active' ? { ...state, profPic: event.data.profPic, imageUpdatedAt: event.data.changedAt } : state;
      case 'PrivacyChanged':
        return state.status === 'active' ? { ...state, isPrivate: event.data.isPrivate } : state;
      case 'AccountDeleted':
        return { status: 'deleted', userId: event.data.userId, handle: event.data.handle };
      case 'SignUpAbandoned':
        return { status: 'abandoned', userId: event.data.userId };
      default: {
        const unknown: never = event;
        throw new Error(`unknown event ${JSON.stringify(unknown)}`);
      }
    }
  },
};
