import { SOCIAL_TOPIC, type SocialEvent } from '@castie/contracts';
import { collectionSpec, DuplicateKeyError, type DocumentStore, type Projection } from '@castie/platform';

/**
 * What two people are to each other (ids sorted into `users`): a pending request, friends, or
 * `none` once a request was rejected or a friendship ended. `none` documents are kept (not
 * deleted) so that they remember the stream version they applied: an old event delivered again
 * cannot bring an ended friendship back.
 */
export interface FriendshipDoc {
  _id: string;
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
export const FRIENDSHIPS = collectionSpec<FriendshipDoc>({ name: 'friendships', arrays: ['users'], indexes: [{ keys: { users: 1 } }] });
export const pairId = (a: string, b: string): string => (a < b ? `${a}-${b}` : `${b}-${a}`);

/**
 * Builds `friendships` from the social topic. Each pair has one stream, so its events arrive in
 * order; a document only moves forward in its stream's versions, so redelivered events (rule 5),
 * even one alone after newer ones, change nothing.
 */
export function friendshipsProjection(store: DocumentStore): Projection {
  const friendships = store.collection(FRIENDSHIPS);

  async function write(doc: FriendshipDoc): Promise<void> {
    const { _id, ...fields } = doc;
    try {
      await friendships.updateOne({ _id, $or: [{ version: { $exists: false } }, { version: { $lt: doc.version } }] }, { $set: fields }, { upsert: true });
    } catch (error) {
      // The document exists at this version or a newer one: nothing to do.
      if (!(error instanceof DuplicateKeyError)) throw error;
    }
  }

  return {
    name: 'friendships',
    version: 1,
    topics: [SOCIAL_TOPIC],
    collections: [FRIENDSHIPS],
    async apply(event, envelope) {
      const e = event as SocialEvent;
      const at = { since: envelope.occurredAt, version: envelope.streamVersion };
      switch (e.type) {
        case 'FrodadRequested':
        case 'FrodadRequestAccepted':
        case 'FrodadRequestRejected': {
          const { fromId, toId } = e.data;
          const status = e.type === 'FrodadRequested' ? 'requested' : e.type === 'FrodadRequestAccepted' ? 'friends' : 'none';
          return write({ _id: pairId(fromId, toId), users: [fromId, toId].sort() as [string, string], status, fromId, toId, ...at });
        }
        case 'FrodadRemoved': {
          const { byId, otherId } = e.data;
          return write({ _id: pairId(byId, otherId), users: [byId, otherId].sort() as [string, string], status: 'none', fromId: byId, toId: otherId, ...at });
        }
        default: {
          const unknown: never = e;
          throw new Error(`unhandled ${JSON.stringify(unknown)}`);
        }
      }
    },
  };
}
