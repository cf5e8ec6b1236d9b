import { socialEvents } from '@castie/contracts';
import { CommandHandler, type Clock, type DocumentStore, type EventStore, type ReadModels } from '@castie/platform';
import { People } from '@castie/reference';
import { friendshipDecider } from './frodads/decider.ts';

export interface SocialDeps {
  /** Event store of the topic `social` (frodad streams), written only by this service. */
  frodads: EventStore;
  /** This service's read models: its copy of people and friendships (packages/reference). */
  documents: DocumentStore;
  clock: Clock;
  /** How far `documents` is in the log: requests wait for their user's writes; unknown handles catch up first. */
  readModels?: ReadModels;
  /** IANA time zone of dates and times in responses. */
  timeZone?: string;
  /** Check every response against its contract (on in tests). */
  checkResponses?: boolean;
}

/** What the features of social share: the friendship streams and the copy of people. */
export function socialContext(deps: SocialDeps) {
  const frodads = new CommandHandler(deps.frodads, socialEvents, friendshipDecider);
  const people = new People(deps.documents, deps.timeZone ?? 'UTC', deps.readModels);
  return { ...deps, frodads, people, routeOptions: { checkResponses: deps.checkResponses ?? false } };
}
export type SocialContext = ReturnType<typeof socialContext>;
