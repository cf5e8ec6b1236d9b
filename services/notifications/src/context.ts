import { notificationEvents } from '@castie/contracts';
import { FactRecorder, type Clock, type EventStore } from '@castie/platform';
import type { DocumentStore } from '@castie/platform';
import type { GroupDirectory, People } from '@castie/reference';
import { inboxFacts } from './inbox/facts.ts';
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
    inbox: new FactRecorder(deps.inbox, notificationEvents, inboxFacts),
    views: new NotificationViews(deps.documents, deps.people, deps.groups, deps.timeZone),
  };
}
export type NotificationsContext = ReturnType<typeof notificationsContext>;
