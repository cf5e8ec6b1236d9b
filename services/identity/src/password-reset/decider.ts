import { DomainError, type LoginEvent } from '@castie/contracts';
import type { Decider } from '@castie/platform';

/**
 * A password-reset link, stream `reset-<sha256 of the token>`: the token itself is only in the
 * e-mail. A link works once and until it expires.
 */
export type ResetState = { status: 'none' } | { status: 'issued'; userId: string; email: string; expiresAt: string } | { status: 'used'; userId: string; email: string };

export type ResetCommand = { type: 'IssueReset'; userId: string; email: string; expiresAt: Date } | { type: 'UseReset'; now: Date };

type ResetEvent = Extract<LoginEvent, { type: 'PasswordResetRequested' | 'PasswordResetUsed' }>;

const invalidLink = () => new DomainError('not_allowed', 'this password reset link is not valid any more: ask for a new one');

export const resetDecider: Decider<ResetCommand, ResetEvent, ResetState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'IssueReset':
        if (state.status !== 'none') throw new Error('reset token collision');
        return [{ type: 'PasswordResetRequested', data: { userId: command.userId, email: command.email, expiresAt: command.expiresAt.toISOString() } }];
      case 'UseReset':
        if (state.status !== 'issued' || Date.parse(state.expiresAt) <= command.now.getTime()) throw invalidLink();
        return [{ type: 'PasswordResetUsed', data: { userId: state.userId } }];
      default: {
        const unknown: never = command;
        throw new Error(`unknown command ${JSON.stringify(unknown)}`);
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'PasswordResetRequested':
        return { status: 'issued', userId: event.data.userId, email: event.data.email, expiresAt: event.data.expiresAt };
      case 'PasswordResetUsed':
        return state.status === 'issued' ? { status: 'used', userId: state.userId, email: state.email } : state;
      default: {
        const unknown: never = event;
        throw new Error(`unknown event ${JSON.stringify(unknown)}`);
      }
    }
  },
};
