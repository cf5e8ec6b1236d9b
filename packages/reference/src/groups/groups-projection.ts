import { CASTIES_TOPIC, GROUPS_TOPIC, IDENTITY_TOPIC, type CastieEvent, type GroupEvent, type IdentityEvent } from '@castie/contracts';
import { collectionSpec, insertSeeds, updateOnce, type Doc, type Projection } from '@castie/platform';

/** One group as every service that shows groups knows it. `_id` is the slug. */
export interface GroupDoc extends Doc {
  /** False while only events that mention the group (a Castie, a follow) have arrived, not GroupCreated. */
  created: boolean;
  slug: string;
  groupName: string;
  /** For alphabetical lists. */
  groupNameLower: string;
  groupInfoText: string;
  groupIcon: string;
  requiresApproval: boolean;
  accessDeniedMessage: string;
  restrictCreation: boolean;
  /** User ids of the group admins (approve or deny requests) and of the named creators. */
  admins: string[];
  creators: string[];
  /** Followers whose account is not deleted. */
  followersCount: number;
  numberCasties: number;
  createdAt: string | null;
}

/** One user's relation to one group. `_id` is `<slug>:<userId>`. Never deleted (it keeps its applied marks). */
export interface MembershipDoc extends Doc {
  slug: string;
  userId: string;
  following: boolean;
  access: 'granted' | 'pending' | null;
  /** When access was last requested / when the user started following; null when not. */
  requestedAt: string | null;
  since: string | null;
}

/** A user's scores on the answered Casties of one group. `_id` is `<slug>:<userId>`. */
export interface GroupScoreDoc extends Doc {
  slug: string;
  userId: string;
  /** Forecasts on answered Casties of the group, the correct ones, and the points they earned. */
  answered: number;
  correct: number;
  xp: number;
}

/** Indexes: created groups by approval; created groups alphabetical by name (pages of the groups list). */
export const GROUPS = collectionSpec<GroupDoc>({ name: 'groups', arrays: ['admins', 'creators'], indexes: [{ keys: { created: 1, requiresApproval: 1 } }, { keys: { created: 1, groupNameLower: 1, _id: 1 } }] });
/**
 * Indexes: a user's groups by follow date; a group's followers by follow date (id breaking ties:
 * pages); a group's pending requests by date; how many of some users follow each group (frodads
 * per group in listings, counted in the index alone).
 */
export const GROUP_MEMBERSHIPS = collectionSpec<MembershipDoc>({
  name: 'group_memberships',
  indexes: [
    { keys: { userId: 1, following: 1, since: 1, _id: 1 } },
    { keys: { slug: 1, following: 1, since: 1, _id: 1 } },
    { keys: { slug: 1, access: 1, requestedAt: 1 } },
    { keys: { userId: 1, following: 1, slug: 1 } },
  ],
});
/** Indexes: a user's scores (group leaderboards and rankings are sorted sets of their own, casties service). */
export const GROUP_SCORES = collectionSpec<GroupScoreDoc>({ name: 'group_scores', indexes: [{ keys: { userId: 1 } }] });
/** Users whose account was deleted: they no longer count as followers. */
export const GROUP_DELETED_USERS = collectionSpec<Doc>({ name: 'group_deleted_users' });

export const membershipId = (slug: string, userId: string): string => `${slug}:${userId}`;

const groupSeed: Omit<GroupDoc, keyof Doc | 'slug'> = {
  created: false,
  groupName: '',
  groupNameLower: '',
  groupInfoText: '',
  groupIcon: '',
  requiresApproval: false,
  accessDeniedMessage: '',
  restrictCreation: false,
  admins: [],
  creators: [],
  followersCount: 0,
  numberCasties: 0,
  createdAt: null,
};

/** Follower count change an event makes: the groups decider only emits these from the matching state. */
function followerDelta(type: GroupEvent['type']): number {
  switch (type) {
    case 'GroupFollowed':
    case 'GroupAccessGranted':
      return 1;
    case 'GroupUnfollowed':
      return -1;
    default:
      return 0;
  }
}

/**
 * Builds the group read model from the `groups` topic (groups, admins, creators, memberships),
 * the `casties` topic (numberCasties, per-user group scores) and the `identity` topic (deleted
 * accounts stop counting as followers), into the running service's own store.
 *
 * Idempotent (rule 5): every write goes through updateOnce, which records per document the last
 * log offset applied, so a redelivered record changes nothing, counters included. Order across
 * topics and partitions does not matter: documents are seeded by whichever event arrives first,
 * and followersCount = memberships that follow and whose user is not deleted, whether the
 * deletion is applied before or after the follows.
 */
export function groupsProjection(): Projection {
  const seeds = insertSeeds(groupSeed);
  const seed = (slug: string, skip: readonly string[]): Partial<GroupDoc> => (skip.includes('slug') ? seeds(skip) : { ...seeds(skip), slug });

  return {
    name: 'groups',
    version: 1,
    topics: [GROUPS_TOPIC, CASTIES_TOPIC, IDENTITY_TOPIC],
    collections: [GROUPS, GROUP_MEMBERSHIPS, GROUP_SCORES, GROUP_DELETED_USERS],
    async apply(event, envelope, record, unit) {
      const groups = unit.collection(GROUPS);
      const memberships = unit.collection(GROUP_MEMBERSHIPS);
      const scores = unit.collection(GROUP_SCORES);
      const deleted = unit.collection(GROUP_DELETED_USERS);
      if (record.topic === GROUPS_TOPIC) {
        const e = event as GroupEvent;
        switch (e.type) {
          case 'GroupCreated': {
            const { slug, ...fields } = e.data;
            const set = { ...fields, created: true, groupNameLower: fields.groupName.toLowerCase(), createdAt: envelope.occurredAt };
            await updateOnce(groups, slug, record, { $set: set, $setOnInsert: seed(slug, Object.keys(set)) });
            return;
          }
          case 'GroupConfigured': {
            // Only the changed settings: the group's stream orders it after GroupCreated.
            const { slug, ...changed } = e.data;
            const set: Partial<GroupDoc> = Object.fromEntries(Object.entries(changed).filter(([, v]) => v !== undefined));
            if (set.groupName !== undefined) set.groupNameLower = set.groupName.toLowerCase();
            await updateOnce(groups, slug, record, { $set: set, $setOnInsert: seed(slug, Object.keys(set)) });
            return;
          }
          case 'GroupAdminNamed':
            await updateOnce(groups, e.data.slug, record, { $addToSet: { admins: e.data.userId }, $setOnInsert: seed(e.data.slug, ['admins']) });
            return;
          case 'GroupCreatorNamed':
            await updateOnce(groups, e.data.slug, record, { $addToSet: { creators: e.data.userId }, $setOnInsert: seed(e.data.slug, ['creators']) });
            return;
          case 'GroupFollowed':
          case 'GroupAccessRequested':
          case 'GroupAccessGranted':
          case 'GroupAccessDenied':
          case 'GroupUnfollowed': {
            const { slug, userId } = e.data;
            const at = envelope.occurredAt;
            const state: Pick<MembershipDoc, 'following' | 'access'> & Partial<MembershipDoc> =
              e.type === 'GroupFollowed'
                ? { following: true, access: null, since: at }
                : e.type === 'GroupAccessRequested'
                  ? { following: false, access: 'pending', requestedAt: at, since: null }
                  : e.type === 'GroupAccessGranted'
                    ? { following: true, access: 'granted', since: at }
                    : { following: false, access: null, requestedAt: null, since: null };
            const insert: Partial<MembershipDoc> = Object.fromEntries(Object.entries({ slug, userId, requestedAt: null, since: null }).filter(([k]) => !(k in state)));
            await updateOnce(memberships, membershipId(slug, userId), record, { $set: state, $setOnInsert: insert });
            // The count changes even if the membership write above was already applied before a
            // crash: the group document has its own applied mark.
            const delta = followerDelta(e.type);
            if (delta !== 0 && !(await deleted.findOne({ _id: userId }))) {
              await updateOnce(groups, slug, record, { $inc: { followersCount: delta }, $setOnInsert: seed(slug, ['followersCount']) });
            }
            return;
          }
          default: {
            const unknown: never = e;
            throw new Error(`unhandled ${JSON.stringify(unknown)}`);
          }
        }
      }

      if (record.topic === CASTIES_TOPIC) {
        const e = event as CastieEvent;
        if (e.type === 'CastieCreated') {
          await updateOnce(groups, e.data.groupSlug, record, { $inc: { numberCasties: 1 }, $setOnInsert: seed(e.data.groupSlug, ['numberCasties']) });
        } else if (e.type === 'CastieAnswered' || e.type === 'ForecastsScored') {
          const slug = e.data.groupSlug;
          for (const s of e.data.scores) {
            await updateOnce(scores, membershipId(slug, s.userId), record, { $inc: { answered: 1, correct: s.correct ? 1 : 0, xp: s.points }, $setOnInsert: { slug, userId: s.userId } });
          }
        }
        return;
      }

      if (record.topic === IDENTITY_TOPIC) {
        const e = event as IdentityEvent;
        if (e.type !== 'AccountDeleted') return;
        const userId = e.data.userId;
        await deleted.replaceOne({ _id: userId }, { _id: userId }, { upsert: true });
        // The follows applied so far stop counting; follows applied later are not counted (above).
        for (const m of await memberships.find({ userId, following: true })) {
          await updateOnce(groups, m.slug, record, { $inc: { followersCount: -1 } }, { upsert: false });
        }
      }
    },
  };
}
