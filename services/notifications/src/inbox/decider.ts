import type { NotificationEvent } from '@castie/contracts';
import type { Decider } from '@castie/platform';

/**
 * A user's inbox, stream `inbox-<userId>`: when they last opened their notifications and last
 * signed in. Nothing here can be refused; the stream exists so these facts are events like any
 * other (replayable, published), not mutable rows.
 */
export interface InboxState {
  lastRetrievedAt: string | null;
  lastSignedInAt: string | null;
}

export type InboxCommand =
  | { type: 'RetrieveNotifications'; userId: string; now: Date }
  | { type: 'SignIn'; userId: string; lastSeenDate: string; lastSeenTime: string; now: Date };

export const inboxDecider: Decider<InboxCommand, NotificationEvent, InboxState> = {
  initialState: () => ({ lastRetrievedAt: null, lastSignedInAt: null }),

  decide(command) {
    switch (command.type) {
      case 'RetrieveNotifications':
        return [{ type: 'NotificationsRetrieved', data: { userId: command.userId, at: command.now.toISOString() } }];
      case 'SignIn':
        return [{ type: 'SignedIn', data: { userId: command.userId, lastSeenDate: command.lastSeenDate, lastSeenTime: command.lastSeenTime, at: command.now.toISOString() } }];
      default: {
        const unknown: never = command;
        throw new Error(`unknown command ${JSON.stringify(unknown)}`);
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'NotificationsRetrieved':
        return { ...state, lastRetrievedAt: event.data.at };
      case 'SignedIn':
        return { ...state, lastSignedInAt: event.data.at };
      default: {
        const unknown: never = event;
        throw new Error(`unknown event ${JSON.stringify(unknown)}`);
      }
    }
  },
};
