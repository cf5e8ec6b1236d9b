import { CASTIES_TOPIC, GROUPS_TOPIC, IDENTITY_TOPIC, type CastieEvent, type GroupEvent, type IdentityEvent } from '@castie/contracts';
import { collectionSpec, type Doc, type Projection, type ScoreChange, type SortedSets, type UnitOfWork } from '@castie/platform';
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

/** About how many sorted-set changes one call makes (a Redis MULTI): a person's are never split. */
const SCORE_CHANGES_PER_CALL = 2000;

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
 * twice, or in another order across topics, leaves the same boards. So a rebuild (every read
 * model, or this one alone: its version bumped, or its sets lost) builds the boards in one pass
 * over people and groups once they caught up with the log (buildFromReadModels).
 */
export function leaderboardsProjection(sets: SortedSets): Projection {
  const version = 1;

  /**
   * Puts each person of `due` where they stand now on the overall board and on the boards of
   * the groups named (every group they follow when null), from what the read models hold now.
   * Each read model is read once for all of them. The sorted sets change a few thousand changes
   * at a time, each person's together (one Redis MULTI each: a catch-up batch names thousands).
   */
  async function refresh(unit: UnitOfWork, due: ReadonlyMap<string, ReadonlySet<string> | null>): Promise<void> {
    const people = new People(unit);
    const groups = new GroupDirectory(unit, people);
    const entries = unit.collection(BOARD_ENTRIES);
    const ids = [...due.keys()];
    const [persons, known] = await Promise.all([people.byIds(ids), entries.byIds(ids)]);
    /** Per person, in `due` order: their changes. */
    const changesOf = new Map<string, ScoreChange[]>();
    const asked: { userId: string; slug: string; member: string }[] = [];
    const gone: string[] = [];
    const renamed: BoardEntryDoc[] = [];
    for (const [userId, slugs] of due) {
      const person = persons.get(userId);
      const member = person?.status === 'active' && person.handleLower ? boardMember(person) : null;
      const old = known.get(userId)?.member ?? null;
      if (member === null && old === null) continue;
      // A new member spelling (rename) or none (deleted) concerns every board the person is on:
      // the overall one and those of the groups they follow (every follow change refreshes its
      // group). The person's `following` holds every group they follow (and may hold one they only
      // requested access to since): read by id, so a rebuild needs no index to find them.
      const scope = old !== member || slugs === null ? new Set([...(slugs ?? []), ...(person?.following ?? [])]) : slugs;
      const changes: ScoreChange[] = [];
      changesOf.set(userId, changes);
      if (old !== null && old !== member) {
        changes.push({ key: OVERALL_BOARD, member: old, score: null });
        for (const slug of scope) changes.push({ key: groupBoard(slug), member: old, score: null }, { key: rankedBoard(slug), member: old, score: null });
      }
      if (member !== null && person) {
        changes.push({ key: OVERALL_BOARD, member, score: person.xp });
        for (const slug of scope) asked.push({ userId, slug, member });
      }
      if (member === null) gone.push(userId);
      else if (member !== old) renamed.push({ _id: userId, member });
    }
    const standings = await groups.standings(asked);
    asked.forEach(({ userId, slug, member }, i) => {
      const { following, answered, xp } = standings[i]!;
      changesOf.get(userId)!.push({ key: groupBoard(slug), member, score: following ? xp : null }, { key: rankedBoard(slug), member, score: following && answered > 0 ? xp : null });
    });
    let call: ScoreChange[] = [];
    for (const changes of changesOf.values()) {
      call.push(...changes);
      if (call.length < SCORE_CHANGES_PER_CALL) continue;
      await sets.setScores(call, unit);
      call = [];
    }
    if (call.length > 0) await sets.setScores(call, unit);
    for (const userId of gone) await entries.deleteOne({ _id: userId });
    for (const entry of renamed) await entries.replaceOne({ _id: entry._id }, entry, { upsert: true });
  }

  /**
   * Who the batch's events concern, and on which groups' boards (null: every board they are on):
   * refreshed once at the end of the batch, from what the read models hold then.
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
        await sets.setScores([{ key: BUILT, member: `v${version}`, score: 0 }], null);
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
        if (e.type !== 'CastieAnswered' && e.type !== 'ForecastsScored') return;
        for (const s of e.data.scores) note(s.userId, [e.data.groupSlug]);
      }
    },
    async endBatch(unit) {
      const now = due;
      due = new Map();
      if (now.size > 0) await refresh(unit, now);
    },
    // The boards are a function of people and groups: a rebuild puts everyone where they stand
    // once those are built, instead of after each batch (many times over for the same people).
    async buildFromReadModels(unit) {
      due = new Map();
      for await (const page of new People(unit).everyone()) await refresh(unit, new Map(page.map((person) => [person._id, null])));
    },
  };
}
