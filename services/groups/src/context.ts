import { DomainError, groupEvents, messages, SLUG_PATTERN } from '@castie/contracts';
import { CommandHandler, type Caller, type Clock, type CommandMeta, type DocumentStore, type EventStore, type MediaStore, type ReadModels } from '@castie/platform';
import { GroupDirectory, People } from '@castie/reference';
import { groupDecider, groupStreamId, type GroupState } from './administration/group-decider.ts';
import { membershipDecider } from './following/membership-decider.ts';

export interface GroupsDeps {
  /** Event store of the topic `groups` (this service is its only writer). */
  store: EventStore;
  /** This service's own read models: people, friendships and groups (see module.ts). */
  documents: DocumentStore;
  /** How far `documents` is in the log: admin writes wait for it, unknown handles and slugs catch up with it. */
  readModels: ReadModels;
  clock: Clock;
  /** Where group icons are stored: a replaced icon's file is deleted (without it, left in place). */
  media?: Pick<MediaStore, 'delete'>;
  /** IANA time zone of the dates and times the API shows. */
  timeZone: string;
  /** Check every response against its contract (on in tests). */
  checkResponses?: boolean;
}

export type CreatedGroup = Extract<GroupState, { status: 'created' }>;

/** What the features of the groups service share: its two aggregates and its read models. */
export function groupsContext(deps: GroupsDeps) {
  const groups = new CommandHandler(deps.store, groupEvents, groupDecider);
  const memberships = new CommandHandler(deps.store, groupEvents, membershipDecider);
  const people = new People(deps.documents, deps.timeZone, deps.readModels);
  const directory = new GroupDirectory(deps.documents, people, deps.readModels);
  const opts = { checkResponses: deps.checkResponses ?? false };

  /**
   * The group as its own stream knows it (always current, unlike the read model): a follow or an
   * approval is decided against it. Unknown or malformed slugs are 404 object_not_found.
   */
  async function loadGroup(slug: string): Promise<CreatedGroup> {
    const normal = slug.toLowerCase();
    if (!SLUG_PATTERN.test(normal)) throw new DomainError('object_not_found', messages.groupNotFound);
    const { state } = await groups.load(groupStreamId(normal));
    if (state.status !== 'created') throw new DomainError('object_not_found', messages.groupNotFound);
    return state;
  }

  const meta = (actor: Caller | 'admin'): CommandMeta => ({ actor: actor === 'admin' ? 'admin' : actor.userId, now: deps.clock.now() });

  return { ...deps, groups, memberships, people, directory, opts, loadGroup, meta };
}
export type GroupsContext = ReturnType<typeof groupsContext>;
