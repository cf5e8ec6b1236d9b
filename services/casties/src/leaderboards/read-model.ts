import { CASTIES_TOPIC, GROUPS_TOPIC, IDENTITY_TOPIC, type CastieEvent, type GroupEvent, type IdentityEvent } from '@castie/contracts';
import { collectionSpec, type Doc, type DocumentStore, type Projection, type ScoreChange, type SortedSets } from '@castie/platform';
import { GroupDirectory, People, type PersonDoc } from '@castie/reference';

/**
 * The boards, as sorted sets:
 * - `board:overall`: every active person, scored by XP (the overall leaderboard);
 * - `board:group:<slug>`: the group's active followers, scored by group XP (its leaderboard);
 * - `board:ranked:<slug>`: those of them with a forecast on an answered Castie of the group
 *   (`ranking` / `totalRanked`, decisions.md).
 *
 * Tie rule: equal XP ranks by lowercased handle, A to Z (handles are ASCII letters and digits,
 * so byte order is alphabetical order with digits first), as the boards were ordered before.
 * Members spell it: `<lowercased handle> <user id>` (a space sorts before every handle
 * character), so the sorted sets' own tie rule (member in byte order) is this one, and the user
 * id makes a member unique and tells whose it is.
 */
export const BOARD_PREFIX = 'board:';
export const OVERALL_BOARD = `${BOARD_PREFIX}overall`;
export const groupBoard = (slug: string): string => `${BOARD_PREFIX}group:${slug.toLowerCase()}`;
export const rankedBoard = (slug: string): string => `${BOARD_PREFIX}ranked:${slug.toLowerCase()}`;
/** Holds one member, `v<version>`, once a rebuild of that version started: its absence means the sets were lost. */
const BUILT = `${BOARD_PREFIX}built`;

export const boardMember = (person: Pick<PersonDoc, '_id' | 'handleLower'>): string => `${person.handleLower} ${person._id}`;
export const userOfMember = (member: string): string => member.slice(member.indexOf(' ') + 1);

/** The member a person has on the boards now (`_id`: user id): a rename or a deletion takes the old one off. */
export interface BoardEntryDoc extends Doc {
  member: string;
}
export const BOARD_ENTRIES = collectionSpec<BoardEntryDoc>({ name: 'board_entries' });

/**
 * Keeps the boards from the scoring events and what changes who stands on them: a sign-up
 * completed, a rename, a deleted account (identity), a follow or unfollow (groups), and the
 * points of an answered Castie (casties).
 *
 * It reads the XP, follows and statuses that the people and groups projections keep (they run
 * before it in the same batch) and sets absolute scores, never increments: applying an event
 * twice, or in another order across topics, leaves the same boards, and a rebuild of this
 * projection alone (its version bumped, or its sets lost) converges to the live boards.
 */
export function leaderboardsProjection(store: DocumentStore, sets: SortedSets): Projection {
  const people = new People(store);
  const groups = new GroupDirectory(store, people);
  const entries = store.collection(BOARD_ENTRIES);
  const version = 1;

  /** Puts one person where they stand now on the overall board and on the boards of `slugs` (every followed group when null). */
  async function refresh(userId: string, slugs: readonly string[] | null): Promise<void> {
    const [person, entry] = await Promise.all([people.byId(userId), entries.findOne({ _id: userId })]);
    const member = person?.status === 'active' && person.handleLower ? boardMember(person) : null;
    const old = entry?.member ?? null;
    if (member === null && old === null) return;
    // A new member spelling (rename) or none (deleted) concerns every board the person is on:
    // the overall one and those of the groups they follow (every follow change refreshes its
    // group). The person's `following` holds every group they follow (and may hold one they only
    // requested access to since): read by id, so a rebuild needs no index to find them.
    const scope = old !== member || slugs === null ? [...new Set([...(slugs ?? []), ...(person?.following ?? [])])] : slugs;
    const changes: ScoreChange[] = [];
    if (old !== null && old !== member) {
      changes.push({ key: OVERALL_BOARD, member: old, score: null });
      for (const slug of scope) changes.push({ key: groupBoard(slug), member: old, score: null }, { key: rankedBoard(slug), member: old, score: null });
    }
    if (member !== null && person) {
      changes.push({ key: OVERALL_BOARD, member, score: person.xp });
      for (const slug of scope) {
        const [following, score] = await Promise.all([groups.isFollowing(userId, slug), groups.scoreOf(userId, slug)]);
        changes.push({ key: groupBoard(slug), member, score: following ? score.xp : null }, { key: rankedBoard(slug), member, score: following && score.answered > 0 ? score.xp : null });
      }
    }
    await sets.setScores(changes);
    if (member === null) await entries.deleteOne({ _id: userId });
    else if (member !== old) await entries.replaceOne({ _id: userId }, { _id: userId, member }, { upsert: true });
  }

  /**
   * Who the batch's events concern, and on which groups' boards (null: every board they are on):
   * refreshed once at the end of the batch, from what the read models hold then. A rebuild's
   * batches name the same people many times (every scored Castie of theirs).
   */
  let due = new Map<string, Set<string> | null>();
  function note(userId: string, slugs: readonly string[] | null): void {
    const known = due.get(userId);
    if (known === null) return;
    if (slugs === null) due.set(userId, null);
    else if (known) for (const slug of slugs) known.add(slug);
    else due.set(userId, new Set(slugs));
  }

  return {
    name: 'leaderboards',
    version,
    topics: [IDENTITY_TOPIC, GROUPS_TOPIC, CASTIES_TOPIC],
    collections: [BOARD_ENTRIES],
    external: {
      async lost() {
        return (await sets.rankOf(BUILT, `v${version}`)) === null;
      },
      async reset() {
        await sets.dropSortedSets(BOARD_PREFIX);
        await sets.setScores([{ key: BUILT, member: `v${version}`, score: 0 }]);
      },
    },
    async apply(event, _envelope, record) {
      if (record.topic === IDENTITY_TOPIC) {
        const e = event as IdentityEvent;
        switch (e.type) {
          case 'SignUpCompleted':
          case 'ProfileNamed':
          case 'AccountDeleted':
          case 'SignUpAbandoned':
            return note(e.data.userId, null);
          case 'ProfileEdited':
            return e.data.handle === undefined ? undefined : note(e.data.userId, null);
          case 'AccountOpened':
          case 'ProfilePictureChanged':
          case 'PrivacyChanged':
            return;
          default: {
            const unknown: never = e;
            throw new Error(`unhandled ${JSON.stringify(unknown)}`);
          }
        }
      }
      if (record.topic === GROUPS_TOPIC) {
        const e = event as GroupEvent;
        switch (e.type) {
          case 'GroupFollowed':
          case 'GroupAccessGranted':
          case 'GroupUnfollowed':
          case 'GroupAccessDenied':
          case 'GroupAccessRequested':
            return note(e.data.userId, [e.data.slug]);
          case 'GroupCreated':
          case 'GroupConfigured':
          case 'GroupAdminNamed':
          case 'GroupCreatorNamed':
            return;
          default: {
            const unknown: never = e;
            throw new Error(`unhandled ${JSON.stringify(unknown)}`);
          }
        }
      }
      if (record.topic === CASTIES_TOPIC) {
        const e = event as CastieEvent;
        if (e.type !== 'CastieAnswered') return;
        for (const s of e.data.scores) note(s.userId, [e.data.groupSlug]);
      }
    },
    async endBatch() {
      const now = due;
      due = new Map();
      for (const [userId, slugs] of now) await refresh(userId, slugs === null ? null : [...slugs]);
    },
  };
}
