import { socialEvents } from '@castie/contracts';
import { CommandHandler, type Clock, type DocumentStore, type EventStore } from '@castie/platform';
import { People } from '@castie/reference';
import { friendshipDecider } from './frodads/decider.ts';

export interface SocialDeps {
  /** Event store of the topic `social` (frodad streams), written only by this service. */
  frodads: EventStore;
  /** This service's read models: its copy of people and friendships (packages/reference). */
  documents: DocumentStore;
  clock: Clock;
  /** Lets the copy of people catch up with identity before a handle is called unknown. */
  catchUp?: () => Promise<void>;
  /** IANA time zone of dates and times in responses. */
  timeZone?: string;
  /** Check every response against its contract (on in tests). */
  checkResponses?: boolean;
}

/** What the features of social share: the friendship streams and the copy of people. */
export function socialContext(deps: SocialDeps) {
  const frodads = new CommandHandler(deps.frodads, socialEvents, friendshipDecider);
  const people = new People(deps.documents, deps.timeZone ?? 'UTC', deps.catchUp ? { catchUp: deps.catchUp } : {});
  return { ...deps, frodads, people, routeOptions: { checkResponses: deps.checkResponses ?? false } };
}
export type SocialContext = ReturnType<typeof socialContext>;
