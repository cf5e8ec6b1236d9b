import type { NotificationEvent } from '@castie/contracts';

/**
 * A user's inbox, stream `inbox-<userId>`: when they opened their notifications and signed in.
 * Nothing here can be refused nor depends on what came before, so these are facts recorded as
 * they happen (FactRecorder: the stream is never read to add one, however long it grew); the
 * stream exists so they are events like any other (replayable, published), not mutable rows.
 * The read model keeps the last of each (`lastRetrievedAt`).
 */
export type InboxCommand =
  | { type: 'RetrieveNotifications'; userId: string; now: Date }
  | { type: 'SignIn'; userId: string; lastSeenDate: string; lastSeenTime: string; now: Date };

export function inboxFacts(command: InboxCommand): NotificationEvent[] {
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
}
