import { DomainError, messages, type LoginEvent } from '@castie/contracts';
import type { Decider } from '@castie/platform';

/**
 * A login, stream `login-<e-mail>` (private topic `identity-logins`): who holds this e-mail
 * address and with which password hash. Appending to the stream with an expected version is
 * what keeps e-mails unique under concurrent sign-ups. A closed login frees the address.
 */
export type LoginState = { status: 'free' } | { status: 'open'; userId: string; email: string; passwordHash: string };

export type LoginCommand =
  | { type: 'CreateLogin'; userId: string; email: string; passwordHash: string; context: 'signup' | 'preferences' }
  | { type: 'ChangePassword'; userId: string; passwordHash: string }
  | { type: 'CloseLogin'; userId: string; reason: 'email-changed' | 'account-deleted' | 'sign-up-abandoned' };

type LoginStreamEvent = Extract<LoginEvent, { type: 'LoginCreated' | 'PasswordChanged' | 'LoginClosed' }>;

export const loginDecider: Decider<LoginCommand, LoginStreamEvent, LoginState> = {
  initialState: () => ({ status: 'free' }),

  decide(command, state) {
    switch (command.type) {
      case 'CreateLogin':
        if (state.status === 'open') {
          throw new DomainError('email_not_unique', command.context === 'signup' ? messages.emailNotUniqueSignup : messages.emailNotUniquePreferences);
        }
        return [{ type: 'LoginCreated', data: { userId: command.userId, email: command.email, passwordHash: command.passwordHash } }];
      case 'ChangePassword':
        if (state.status !== 'open' || state.userId !== command.userId) throw new DomainError('authentication_failed', 'this login is no longer valid');
        return [{ type: 'PasswordChanged', data: { userId: command.userId, passwordHash: command.passwordHash } }];
      case 'CloseLogin':
        if (state.status !== 'open' || state.userId !== command.userId) return [];
        return [{ type: 'LoginClosed', data: { userId: command.userId, reason: command.reason } }];
      default: {
        const unknown: never = command;
        throw new Error(`unknown command ${JSON.stringify(unknown)}`);
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'LoginCreated':
        return { status: 'open', userId: event.data.userId, email: event.data.email, passwordHash: event.data.passwordHash };
      case 'PasswordChanged':
        return state.status === 'open' ? { ...state, passwordHash: event.data.passwordHash } : state;
      case 'LoginClosed':
        return { status: 'free' };
      default: {
        const unknown: never = event;
        throw new Error(`unknown event ${JSON.stringify(unknown)}`);
      }
    }
  },
};
