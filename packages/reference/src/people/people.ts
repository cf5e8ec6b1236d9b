import { apiDate, apiTime, DomainError, IDENTITY_TOPIC, levelFor, messages, titleFor, type FriendStatus, type Frodad, type ProfileInfo } from '@castie/contracts';
import { instantKey, keysetPage, listPageDefault, type Collections, type Filter, type KeysetPage, type PageRequest, type ReadModels } from '@castie/platform';
import { FRIENDSHIPS, FRODAD_LISTS, pairId, type FriendshipDoc } from './friendships-projection.ts';
import { PEOPLE, type PersonDoc } from './people-projection.ts';
import { searchPeople } from './search.ts';

/** A person's accuracy in percent over answered Casties (0 when none answered yet). */
export const percentCorrect = (p: Pick<PersonDoc, 'answered' | 'correct'>): number => (p.answered > 0 ? Math.round((p.correct / p.answered) * 100) : 0);

/**
 * Questions about people, answered from this service's own copy (rule 2): who a handle is, how
 * two people relate, and the Profile and Frodad objects the API shows.
 */
export class People {
  readonly #people;
  readonly #friendships;
  readonly #lists;

  /**
   * `readModels` (optional): the service's read models, asked to catch up with the identity topic
   * when a handle is unknown here: the person may have signed up or been renamed a moment ago,
   * and a 404 must not come from a copy that merely lags.
   */
  constructor(
    store: Collections,
    private readonly timeZone = 'UTC',
    private readonly readModels?: Pick<ReadModels, 'catchUp'>,
  ) {
    this.#people = store.collection(PEOPLE);
    this.#friendships = store.collection(FRIENDSHIPS);
    this.#lists = store.collection(FRODAD_LISTS);
  }

  byId(userId: string): Promise<PersonDoc | null> {
    return this.#people.findOne({ _id: userId });
  }

  /** The person holding a handle (any case), active or not; null when nobody does. */
  async byHandle(handle: string): Promise<PersonDoc | null> {
    const found = await this.#people.find({ handleLower: handle.toLowerCase() });
    return found.find((p) => p.status === 'active') ?? found.find((p) => p.status === 'deleted') ?? null;
  }

  /** The active person holding a handle; object_not_found or inactive_user otherwise. */
  async activeByHandle(handle: string): Promise<PersonDoc> {
    let person = await this.byHandle(handle);
    if (!person && this.readModels) {
      await this.readModels.catchUp([IDENTITY_TOPIC], 2000);
      person = await this.byHandle(handle);
    }
    if (!person) throw new DomainError('object_not_found', messages.userNotFound, { handle });
    if (person.status !== 'active') throw new DomainError('inactive_user', messages.inactiveUser, { handle });
    return person;
  }

  /** People by id, deleted accounts included (absent: never signed up here). */
  byIds(ids: readonly string[]): Promise<Map<string, PersonDoc>> {
    return this.#people.byIds(ids);
  }

  /** Everyone, deleted accounts included, `size` at a time in id order: for a read model built from this one in one pass. */
  async *everyone(size = 500): AsyncGenerator<PersonDoc[]> {
    for (let after: string | null = null; ; ) {
      const page: PersonDoc[] = await this.#people.find(after === null ? {} : { _id: { $gt: after } }, { sort: { _id: 1 }, limit: size });
      if (page.length === 0) return;
      yield page;
      after = page[page.length - 1]!._id;
    }
  }

  /** Active people by id (deleted ones vanish from lists). */
  async activeByIds(ids: readonly string[]): Promise<Map<string, PersonDoc>> {
    // The store answers each document once, whatever the repeats in `ids` (a feed page names a
    // creator per Castie); deleted people are left out here.
    const found = await this.#people.byIds(ids);
    for (const [id, person] of found) if (person.status !== 'active') found.delete(id);
    return found;
  }

  /**
   * One page of active people whose handle, first or last name contain every word of `q` (any
   * case), in last-name order, after the `before` cursor of the previous page.
   */
  search(q: string, page: { limit: number; before?: string | undefined }): Promise<{ found: PersonDoc[]; hasMore: boolean; nextBefore: string | null }> {
    return searchPeople(this.#people, q, page);
  }

  /** Ids of a person's frodads (friends), deleted ones included: filter with activeByIds to show. */
  async friendIds(userId: string): Promise<string[]> {
    return (await this.#lists.findOne({ _id: userId }))?.friends ?? [];
  }

  /**
   * One page of a person's active frodads in (lowercased last name, lowercased handle) order, as
   * the whole list, on the people's (status, lastNameLower, handleLower, _id) index narrowed to
   * the person's frodad list.
   */
  async friendsPage(userId: string, req: PageRequest): Promise<KeysetPage<PersonDoc>> {
    const ids = await this.friendIds(userId);
    return keysetPage(this.#people, req, { filter: { status: 'active', _id: { $in: ids } }, key: 'lastNameLower', tie: 'handleLower', direction: 1 });
  }

  /**
   * One page of a person's pending requests, received and sent together, newest first in
   * (since, pair id); requests from or to deleted people are skipped.
   */
  async requestsPage(userId: string, req: PageRequest): Promise<{ received: string[]; sent: string[]; hasMore: boolean; nextBefore: string | null }> {
    const other = (d: FriendshipDoc) => (d.fromId === userId ? d.toId : d.fromId);
    const side = (filter: Filter<FriendshipDoc>) =>
      keysetPage(this.#friendships, req, {
        filter,
        key: 'since',
        direction: -1,
        parseKey: instantKey,
        keep: async (docs) => {
          const active = await this.activeByIds(docs.map(other));
          return docs.filter((d) => active.has(other(d)));
        },
      });
    // Two index ranges (received, sent) after the same cursor, merged: the newest `limit` of both.
    const [received, sent] = await Promise.all([side({ toId: userId, status: 'requested' }), side({ fromId: userId, status: 'requested' })]);
    const limit = req.limit ?? listPageDefault;
    const merged = [...received.items, ...sent.items].sort((a, b) => (a.since === b.since ? (a._id < b._id ? 1 : -1) : a.since < b.since ? 1 : -1));
    const items = merged.slice(0, limit);
    const hasMore = merged.length > limit || received.hasMore || sent.hasMore;
    const last = items.at(-1);
    return {
      received: items.filter((d) => d.toId === userId).map((d) => d.fromId),
      sent: items.filter((d) => d.fromId === userId).map((d) => d.toId),
      hasMore,
      nextBefore: hasMore && last ? `${last.since}|${last._id}` : null,
    };
  }

  /** Pending requests a person received and sent, newest first (deleted people included: filter to show). */
  async requests(userId: string): Promise<{ received: string[]; sent: string[] }> {
    const docs = await this.#friendships.find({ users: userId, status: 'requested' }, { sort: { since: -1, _id: 1 } });
    return { received: docs.filter((d) => d.toId === userId).map((d) => d.fromId), sent: docs.filter((d) => d.fromId === userId).map((d) => d.toId) };
  }

  /** How `other` relates to `requester`, as profileInfo says it. */
  async relation(requesterId: string, otherId: string): Promise<FriendStatus> {
    if (requesterId === otherId) return 'self';
    const doc = await this.#friendships.findOne({ _id: pairId(requesterId, otherId) });
    if (!doc || doc.status === 'none') return 'not-friends';
    if (doc.status === 'friends') return 'friend';
    return doc.fromId === requesterId ? 'pending' : 'respond';
  }

  /** Relations of many people to one requester, in one query (listings). */
  async relations(requesterId: string, otherIds: readonly string[]): Promise<Map<string, FriendStatus>> {
    const out = new Map<string, FriendStatus>(otherIds.map((id) => [id, id === requesterId ? 'self' : 'not-friends']));
    const docs = await this.#friendships.find({ users: requesterId, status: { $ne: 'none' } });
    for (const doc of docs) {
      const other = doc.users[0] === requesterId ? doc.users[1] : doc.users[0];
      if (!out.has(other)) continue;
      out.set(other, doc.status === 'friends' ? 'friend' : doc.fromId === requesterId ? 'pending' : 'respond');
    }
    return out;
  }

  /** True when the requester may see only profileInfo of this person (spec: privacy applies to friends too). */
  hidesFrom(person: PersonDoc, requesterId: string): boolean {
    return person.isPrivate && person._id !== requesterId;
  }

  /** The Profile object of an active person (handle) for a requester. */
  async profileInfo(requesterId: string, handle: string): Promise<{ person: PersonDoc; info: ProfileInfo }> {
    const person = await this.activeByHandle(handle);
    return { person, info: await this.profileInfoOf(requesterId, person) };
  }

  /** The Profile object of a person already found (e.g. by a service that waited for its copy to catch up). */
  async profileInfoOf(requesterId: string, person: PersonDoc): Promise<ProfileInfo> {
    const [friends, relation] = await Promise.all([this.friendIds(person._id), this.relation(requesterId, person._id)]);
    const activeFriends = await this.activeByIds(friends);
    const level = levelFor(person.xp);
    const percent = percentCorrect(person);
    const { adjective, noun } = titleFor(level, percent);
    return {
      handle: person.handle,
      user_uuid: person._id,
      firstName: person.firstName,
      lastName: person.lastName,
      city: person.city,
      state: person.state,
      profPic: person.profPic,
      image_last_updated_date: person.imageUpdatedAt ? apiDate(person.imageUpdatedAt, this.timeZone) : null,
      image_last_updated_time: person.imageUpdatedAt ? apiTime(person.imageUpdatedAt, this.timeZone) : null,
      level,
      adjective,
      noun,
      is_private: person.isPrivate,
      percentCorrect: percent,
      myCastiesNumber: person.castiesCreated,
      groupsNumber: person.following.length,
      frodadsNumber: activeFriends.size,
      forecastsNumber: person.forecasts,
      friend_status: relation,
    };
  }

  /** A Frodad object (listing entry); `friends` instead of `friend`, as listings say it. */
  frodad(person: PersonDoc, relation: FriendStatus, options: { withLevel?: boolean } = {}): Frodad {
    return {
      handle: person.handle,
      lastName: person.lastName,
      firstName: person.firstName,
      profPic: person.profPic,
      friend_status: relation === 'friend' ? 'friends' : relation,
      ...(options.withLevel === false ? {} : { level: levelFor(person.xp) }),
    };
  }
}
