import { DomainError, GROUPS_TOPIC, messages, type GroupAccess, type GroupObject } from '@castie/contracts';
import { instantKey, keysetPage, type Collections, type KeysetPage, type PageRequest, type ReadModels } from '@castie/platform';
import { People } from '../people/people.ts';
import { GROUP_MEMBERSHIPS, GROUP_SCORES, GROUPS, membershipId, type GroupDoc, type GroupScoreDoc, type MembershipDoc } from './groups-projection.ts';

/** Where one user stands with one group. */
export interface Membership {
  following: boolean;
  access: GroupAccess;
}

const NONE: Membership = { following: false, access: null };

/** Percent correct, rounded; null when the user has no forecast on an answered Castie of the group. */
export const groupAccuracy = (score: Pick<GroupScoreDoc, 'answered' | 'correct'> | null | undefined): number | null =>
  score && score.answered > 0 ? Math.round((score.correct / score.answered) * 100) : null;

/** Alphabetical by group name (case-insensitive), then slug. */
const byName = (a: GroupDoc, b: GroupDoc) => a.groupNameLower.localeCompare(b.groupNameLower) || a.slug.localeCompare(b.slug);

/**
 * Questions about groups, answered from the running service's own copy (rule 2), which
 * `groupsProjections()` keeps and which needs `peopleProjections()` on the same store
 * (friendsCount and follower lists use people and friendships).
 *
 * Rules it encodes (spec + decisions.md):
 * - a group exists once GroupCreated was applied; unknown slugs are 404 object_not_found
 *   "the requested group could not be found" (see `require`);
 * - following: public groups at once; approval-required groups after access is granted
 *   (access `granted`); a requested follow is `pending` and not following;
 * - Casties of an approval-required group are visible only to its followers, who are granted
 *   followers or followed before approval was switched on (`canSee`);
 * - followers create Casties in a group unless it restricts creation to named creators; group
 *   admins count as named creators; either way one must follow the group (`canCreate`).
 *
 * Slugs are matched lowercased. Deleted accounts are left out of followersCount and friendsCount;
 * `followerIds` returns raw ids (filter with People.activeByIds to list people).
 */
/** Above this many (group, frodad) pairs, friendFollows reads the frodads' memberships by user instead of by id. */
const FRIEND_MEMBERSHIP_LOOKUPS = 2000;

export class GroupDirectory {
  readonly #groups;
  readonly #memberships;
  readonly #scores;
  readonly people: People;

  /**
   * `readModels` (optional): asked to catch up with the groups topic only when a slug is unknown
   * here: operators create groups through the admin API, outside any user's session, so a group
   * created a moment ago must not be answered 404 by a copy that merely lags.
   */
  constructor(
    store: Collections,
    people: People = new People(store),
    private readonly readModels?: Pick<ReadModels, 'catchUp'>,
  ) {
    this.#groups = store.collection(GROUPS);
    this.#memberships = store.collection(GROUP_MEMBERSHIPS);
    this.#scores = store.collection(GROUP_SCORES);
    this.people = people;
  }

  /** The group with this slug, or null when it was never created. */
  async bySlug(slug: string): Promise<GroupDoc | null> {
    const find = async () => {
      const doc = await this.#groups.findOne({ _id: slug.toLowerCase() });
      return doc?.created ? doc : null;
    };
    const found = await find();
    if (found || !this.readModels) return found;
    await this.readModels.catchUp([GROUPS_TOPIC], 2000);
    return find();
  }

  /** The group with this slug; 404 object_not_found "the requested group could not be found" otherwise. */
  async require(slug: string): Promise<GroupDoc> {
    const doc = await this.bySlug(slug);
    if (!doc) throw new DomainError('object_not_found', messages.groupNotFound, { group_slug: slug });
    return doc;
  }

  /** Every created group, alphabetical by name. */
  async all(): Promise<GroupDoc[]> {
    return (await this.#groups.find({ created: true })).sort(byName);
  }

  /** Groups by slug (unknown slugs are left out). */
  async bySlugs(slugs: readonly string[]): Promise<Map<string, GroupDoc>> {
    if (slugs.length === 0) return new Map();
    const docs = await this.#groups.find({ _id: { $in: [...new Set(slugs.map((s) => s.toLowerCase()))] }, created: true });
    return new Map(docs.map((d) => [d.slug, d]));
  }

  /** Group names by slug, for lists that show names next to slugs. */
  async namesOf(slugs: readonly string[]): Promise<Map<string, string>> {
    return new Map([...(await this.bySlugs(slugs))].map(([slug, doc]) => [slug, doc.groupName]));
  }

  /** Where a user stands with a group: following and access (granted / pending / null). */
  async membership(userId: string, slug: string): Promise<Membership> {
    const m = await this.#memberships.findOne({ _id: membershipId(slug.toLowerCase(), userId) });
    return m ? { following: m.following, access: m.access } : NONE;
  }

  async isFollowing(userId: string, slug: string): Promise<boolean> {
    return (await this.membership(userId, slug)).following;
  }

  /** The requester's access to a group: `granted`, `pending` or null. */
  async access(userId: string, slug: string): Promise<GroupAccess> {
    return (await this.membership(userId, slug)).access;
  }

  /** True when the user administers the group (may approve or deny its pending requests). */
  async isAdmin(userId: string, slugOrDoc: string | GroupDoc): Promise<boolean> {
    const group = typeof slugOrDoc === 'string' ? await this.bySlug(slugOrDoc) : slugOrDoc;
    return group !== null && group.admins.includes(userId);
  }

  /** Ids of the users following a group (deleted accounts included), oldest follow first. */
  async followerIds(slug: string): Promise<string[]> {
    const docs = await this.#memberships.find({ slug: slug.toLowerCase(), following: true }, { sort: { since: 1 } });
    return docs.map((m) => m.userId);
  }

  /**
   * One page of a group's followers, oldest follow first in (since, membership id), deleted
   * accounts skipped; `only` narrows to these users (the requester's frodads). A new follow joins
   * the end, so it never shifts a page already walked.
   */
  async followersPage(slug: string, req: PageRequest, only?: readonly string[]): Promise<KeysetPage<MembershipDoc>> {
    const filter = { slug: slug.toLowerCase(), following: true, ...(only ? { userId: { $in: [...only] } } : {}) };
    return keysetPage(this.#memberships, req, {
      filter,
      key: 'since',
      direction: 1,
      parseKey: instantKey,
      keep: async (docs) => {
        const active = await this.people.activeByIds(docs.map((m) => m.userId));
        return docs.filter((m) => active.has(m.userId));
      },
    });
  }

  /** One page of the groups a user follows, oldest follow first in (since, membership id). */
  async followsPage(userId: string, req: PageRequest): Promise<{ groups: GroupDoc[]; hasMore: boolean; nextBefore: string | null }> {
    const page = await keysetPage(this.#memberships, req, {
      filter: { userId, following: true },
      key: 'since',
      direction: 1,
      parseKey: instantKey,
      keep: async (docs) => {
        const groups = await this.bySlugs(docs.map((m) => m.slug));
        return docs.filter((m) => groups.has(m.slug));
      },
    });
    const groups = await this.bySlugs(page.items.map((m) => m.slug));
    return { groups: page.items.flatMap((m) => groups.get(m.slug) ?? []), hasMore: page.hasMore, nextBefore: page.nextBefore };
  }

  /** One page of every created group, alphabetical in (lowercased name, slug), as `all()` orders them. */
  async groupsPage(req: PageRequest): Promise<KeysetPage<GroupDoc>> {
    return keysetPage(this.#groups, req, { filter: { created: true }, key: 'groupNameLower', direction: 1 });
  }

  /** Pending requests of a group, oldest first: user id and when it was requested. */
  async pendingOf(slug: string): Promise<{ userId: string; requestedAt: string }[]> {
    const docs = await this.#memberships.find({ slug: slug.toLowerCase(), access: 'pending' }, { sort: { requestedAt: 1 } });
    return docs.map((m) => ({ userId: m.userId, requestedAt: m.requestedAt ?? '' }));
  }

  /** Slugs of the groups a user follows (public, or approval-required with access granted). */
  async followedSlugs(userId: string): Promise<string[]> {
    const docs = await this.#memberships.find({ userId, following: true });
    return docs.map((m) => m.slug);
  }

  /** The groups a user follows with when the follow began, alphabetical by name. */
  async follows(userId: string): Promise<{ group: GroupDoc; since: string | null }[]> {
    const docs = await this.#memberships.find({ userId, following: true });
    const groups = await this.bySlugs(docs.map((m) => m.slug));
    return docs.flatMap((m) => {
      const group = groups.get(m.slug);
      return group ? [{ group, since: m.since }] : [];
    }).sort((a, b) => byName(a.group, b.group));
  }

  /** The groups a user follows, alphabetical by name. */
  async followedGroups(userId: string): Promise<GroupDoc[]> {
    return [...(await this.bySlugs(await this.followedSlugs(userId))).values()].sort(byName);
  }

  /** True when the user may create Casties in the group (pure: from the group and the user's membership). */
  static mayCreate(group: GroupDoc, userId: string, membership: Membership): boolean {
    if (!membership.following) return false;
    return !group.restrictCreation || group.creators.includes(userId) || group.admins.includes(userId);
  }

  /** True when the user may create Casties in the group: follows it, and is a named creator if creation is restricted. */
  async canCreate(userId: string, slugOrDoc: string | GroupDoc): Promise<boolean> {
    const group = typeof slugOrDoc === 'string' ? await this.bySlug(slugOrDoc) : slugOrDoc;
    if (!group) return false;
    return GroupDirectory.mayCreate(group, userId, await this.membership(userId, group.slug));
  }

  /** The groups a user may create Casties in, alphabetical by name. */
  async creatableGroups(userId: string): Promise<GroupDoc[]> {
    const memberships = await this.#memberships.find({ userId, following: true });
    const groups = await this.bySlugs(memberships.map((m) => m.slug));
    return memberships
      .map((m) => groups.get(m.slug))
      .filter((g): g is GroupDoc => g !== undefined && GroupDirectory.mayCreate(g, userId, { following: true, access: null }))
      .sort(byName);
  }

  /**
   * True when the user may see the group's Casties: the group is public, or the user follows it.
   * In an approval-required group one follows only once access was granted, or because one
   * followed before an operator switched approval on: those followers stay in (they count as
   * granted, see `groupObjects`).
   */
  static maySee(group: Pick<GroupDoc, 'requiresApproval'>, membership: Membership): boolean {
    return !group.requiresApproval || membership.following;
  }

  async canSee(userId: string, slugOrDoc: string | GroupDoc): Promise<boolean> {
    const group = typeof slugOrDoc === 'string' ? await this.bySlug(slugOrDoc) : slugOrDoc;
    if (!group) return false;
    return GroupDirectory.maySee(group, await this.membership(userId, group.slug));
  }

  /** Slugs whose Casties the user may see: every public group plus the approval-required groups the user follows. */
  async visibleSlugsFor(userId: string): Promise<string[]> {
    const [open, granted] = await Promise.all([this.#groups.find({ requiresApproval: false, created: true }), this.#memberships.find({ userId, following: true })]);
    return [...new Set([...open.map((g) => g.slug), ...granted.map((m) => m.slug)])];
  }

  /** Slugs of approval-required groups whose Casties the user may NOT see (handy as a `$nin` filter). */
  async hiddenSlugsFor(userId: string): Promise<string[]> {
    const [closed, granted] = await Promise.all([this.#groups.find({ requiresApproval: true, created: true }), this.#memberships.find({ userId, following: true })]);
    const allowed = new Set(granted.map((m) => m.slug));
    return closed.map((g) => g.slug).filter((s) => !allowed.has(s));
  }

  /** The user's scores on the answered Casties of a group (zeros when none). */
  async scoreOf(userId: string, slug: string): Promise<Pick<GroupScoreDoc, 'answered' | 'correct' | 'xp'>> {
    const s = await this.#scores.findOne({ _id: membershipId(slug.toLowerCase(), userId) });
    return { answered: s?.answered ?? 0, correct: s?.correct ?? 0, xp: s?.xp ?? 0 };
  }

  /**
   * Where each user stands in each group, in the order asked: following, and their scores on its
   * answered Casties (zeros when none). Each collection is read once for all of them.
   */
  async standings(asked: readonly { userId: string; slug: string }[]): Promise<{ following: boolean; answered: number; xp: number }[]> {
    if (asked.length === 0) return [];
    const ids = asked.map((a) => membershipId(a.slug.toLowerCase(), a.userId));
    const [memberships, scores] = await Promise.all([this.#memberships.byIds(ids), this.#scores.byIds(ids)]);
    return ids.map((id) => ({ following: memberships.get(id)?.following ?? false, answered: scores.get(id)?.answered ?? 0, xp: scores.get(id)?.xp ?? 0 }));
  }

  /** Percent correct of the user's forecasts on answered Casties of the group; null when none. */
  async accuracy(userId: string, slug: string): Promise<number | null> {
    return groupAccuracy(await this.scoreOf(userId, slug));
  }

  /** The spec's Group object of one group for a requester (null requester: an operator, who follows nothing). */
  async groupObject(requesterId: string | null, slugOrDoc: string | GroupDoc): Promise<GroupObject> {
    const group = typeof slugOrDoc === 'string' ? await this.require(slugOrDoc) : slugOrDoc;
    const objects = await this.groupObjects(requesterId, [group]);
    return objects[group.slug]!;
  }

  /**
   * How many of the frodads follow each of these groups. For a few groups (a group's page), each
   * frodad's membership of each group by its id: a frodad of a person with 300 follows about
   * twenty groups, so reading all their memberships was 6,000 documents for one count. For many
   * groups (listings), a count per group of the memberships the frodads follow, in the index on
   * (user, following, slug): no membership is read.
   */
  private async friendCounts(slugs: readonly string[], friendIds: readonly string[]): Promise<Map<string | null, number>> {
    if (friendIds.length === 0 || slugs.length === 0) return new Map();
    if (slugs.length * friendIds.length > FRIEND_MEMBERSHIP_LOOKUPS) return this.#memberships.countBy({ userId: { $in: [...friendIds] }, following: true }, 'slug');
    const counts = new Map<string | null, number>();
    for (const m of (await this.#memberships.byIds(slugs.flatMap((slug) => friendIds.map((id) => membershipId(slug, id))))).values()) {
      if (m.following) counts.set(m.slug, (counts.get(m.slug) ?? 0) + 1);
    }
    return counts;
  }

  /**
   * Group objects of many groups for one requester, indexed by slug, in a fixed number of
   * queries whatever the number of groups (listings, search, profiles).
   */
  async groupObjects(requesterId: string | null, groups: readonly GroupDoc[]): Promise<Record<string, GroupObject>> {
    if (groups.length === 0) return {};
    const slugs = groups.map((g) => g.slug);
    let mine = new Map<string, MembershipDoc>();
    let myScores = new Map<string, GroupScoreDoc>();
    let friendsBySlug = new Map<string | null, number>();
    if (requesterId) {
      const friendIds = [...(await this.people.activeByIds(await this.people.friendIds(requesterId))).keys()];
      // By user only (an index), then by slug here: a user's memberships are few, while a `$in`
      // over many slugs would gather every membership of those groups first.
      const wanted = new Set(slugs);
      const [memberships, scores, friendCounts] = await Promise.all([
        this.#memberships.find({ userId: requesterId }),
        this.#scores.find({ userId: requesterId }),
        this.friendCounts(slugs, friendIds),
      ]);
      mine = new Map(memberships.filter((m) => wanted.has(m.slug)).map((m) => [m.slug, m]));
      myScores = new Map(scores.filter((s) => wanted.has(s.slug)).map((s) => [s.slug, s]));
      friendsBySlug = friendCounts;
    }
    const out: Record<string, GroupObject> = {};
    for (const group of groups) {
      const m = mine.get(group.slug);
      // A follower of an approval-required group is in, whether granted or following since
      // before approval was switched on: clients show both alike.
      const membership: Membership = m ? { following: m.following, access: group.requiresApproval && m.following ? 'granted' : m.access } : NONE;
      out[group.slug] = {
        slug: group.slug,
        groupName: group.groupName,
        groupInfoText: group.groupInfoText,
        groupIcon: group.groupIcon,
        requiresApproval: group.requiresApproval,
        accessDeniedMessage: group.accessDeniedMessage,
        followersCount: Math.max(0, group.followersCount),
        friendsCount: friendsBySlug.get(group.slug) ?? 0,
        accuracy: groupAccuracy(myScores.get(group.slug)),
        access: membership.access,
        following: membership.following,
        canCreateCastie: requesterId !== null && GroupDirectory.mayCreate(group, requesterId, membership),
        numberCasties: group.numberCasties,
      };
    }
    return out;
  }
}
