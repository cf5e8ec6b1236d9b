import { notificationEvents } from '@castie/contracts';
import { CommandHandler, type Clock, type EventStore } from '@castie/platform';
import type { DocumentStore } from '@castie/platform';
import type { GroupDirectory, People } from '@castie/reference';
import { inboxDecider } from './inbox/decider.ts';
import { NotificationViews } from './read-model/views.ts';

export interface NotificationsDeps {
  inbox: EventStore;
  documents: DocumentStore;
  people: People;
  groups: GroupDirectory;
  clock: Clock;
  timeZone: string;
  checkResponses: boolean;
}

export function notificationsContext(deps: NotificationsDeps) {
  return {
    ...deps,
    inbox: new CommandHandler(deps.inbox, notificationEvents, inboxDecider),
    views: new NotificationViews(deps.documents, deps.people, deps.groups, deps.timeZone),
  };
}
export type NotificationsContext = ReturnType<typeof notificationsContext>;
