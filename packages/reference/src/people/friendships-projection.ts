import { SOCIAL_TOPIC, type SocialEvent } from '@castie/contracts';
import { collectionSpec, DuplicateKeyError, updateOnce, type Doc, type LogRecord, type Projection, type UnitOfWork } from '@castie/platform';

/**
 * What two people are to each other (ids sorted into `users`): a pending request, friends, or
 * `none` once a request was rejected or a friendship ended. `none` documents are kept (not
 * deleted) so that they remember the stream version they applied: an old event delivered again
 * cannot bring an ended friendship back.
 */
export interface FriendshipDoc extends Doc {
  users: [string, string];
  status: 'requested' | 'friends' | 'none';
  /** Who sent the request. */
  fromId: string;
  toId: string;
  /** When the current status began (ISO instant): requests list newest first. */
  since: string;
  /** Version of the pair's stream `frodads-<a>-<b>` this document reflects. */
  version: number;
}

/** Indexed by each of the two people (multikey). */
/** Indexes: a person's pairs; requests a person received, and sent, newest first (id breaking ties: pages). */
export const FRIENDSHIPS = collectionSpec<FriendshipDoc>({
  name: 'friendships',
  arrays: ['users'],
  indexes: [{ keys: { users: 1 } }, { keys: { toId: 1, status: 1, since: -1, _id: -1 } }, { keys: { fromId: 1, status: 1, since: -1, _id: -1 } }],
});

/** A person's frodads, one document per person (`_id`: the person's id): "who are my frodads" in one read. */
export interface FrodadListDoc extends Doc {
  friends: string[];
}
export const FRODAD_LISTS = collectionSpec<FrodadListDoc>({ name: 'frodad_lists', arrays: ['friends'] });
export const pairId = (a: string, b: string): string => (a < b ? `${a}-${b}` : `${b}-${a}`);

/**
 * Builds `friendships` from the social topic. Each pair has one stream, so its events arrive in
 * order; a document only moves forward in its stream's versions, so redelivered events (rule 5),
 * even one alone after newer ones, change nothing.
 */
export function friendshipsProjection(): Projection {
  /** Writes the pair's new state unless a newer one is there, and both people's frodad lists. */
  async function write(unit: UnitOfWork, doc: FriendshipDoc, record: LogRecord): Promise<void> {
    const friendships = unit.collection(FRIENDSHIPS);
    const lists = unit.collection(FRODAD_LISTS);
    const { _id, ...fields } = doc;
    try {
      await friendships.updateOne({ _id, $or: [{ version: { $exists: false } }, { version: { $lt: doc.version } }] }, { $set: fields }, { upsert: true });
    } catch (error) {
      // The document exists at this version or a newer one: nothing to do.
      if (!(error instanceof DuplicateKeyError)) throw error;
    }
    // The lists follow the pair's current state, whatever this event said (a newer one may be there).
    const now = await friendships.findOne({ _id });
    const friends = now?.status === 'friends';
    for (const [me, other] of [doc.users, [doc.users[1], doc.users[0]]] as const) {
      if (friends) await updateOnce(lists, me, record, { $addToSet: { friends: other } });
      else await updateOnce(lists, me, record, { $pull: { friends: other } }, { upsert: false });
    }
  }

  return {
    name: 'friendships',
    version: 2,
    topics: [SOCIAL_TOPIC],
    collections: [FRIENDSHIPS, FRODAD_LISTS],
    async apply(event, envelope, record, unit) {
      const e = event as SocialEvent;
      const at = { since: envelope.occurredAt, version: envelope.streamVersion };
      switch (e.type) {
        case 'FrodadRequested':
        case 'FrodadRequestAccepted':
        case 'FrodadRequestRejected': {
          const { fromId, toId } = e.data;
          const status = e.type === 'FrodadRequested' ? 'requested' : e.type === 'FrodadRequestAccepted' ? 'friends' : 'none';
          return write(unit, { _id: pairId(fromId, toId), users: [fromId, toId].sort() as [string, string], status, fromId, toId, ...at }, record);
        }
        case 'FrodadRemoved': {
          const { byId, otherId } = e.data;
          return write(unit, { _id: pairId(byId, otherId), users: [byId, otherId].sort() as [string, string], status: 'none', fromId: byId, toId: otherId, ...at }, record);
        }
        default: {
          const unknown: never = e;
          throw new Error(`unhandled ${JSON.stringify(unknown)}`);
        }
      }
    },
  };
}
