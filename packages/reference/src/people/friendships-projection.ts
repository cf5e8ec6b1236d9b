import { SOCIAL_TOPIC, type SocialEvent } from '@castie/contracts';
import type { DocumentStore, Projection } from '@castie/platform';

/** A pending request or a friendship between two people (ids sorted into `users`). */
export interface FriendshipDoc {
  _id: string;
  users: [string, string];
  status: 'requested' | 'friends';
  /** Who sent the request. */
  fromId: string;
  toId: string;
  [key: string]: unknown;
}

export const FRIENDSHIPS = 'friendships';
export const pairId = (a: string, b: string): string => (a < b ? `${a}-${b}` : `${b}-${a}`);

/**
 * Builds `friendships` from the social topic. Each pair has one stream (one partition), so its
 * events arrive in order and replaying them lands on the same state: no counters to guard.
 */
export function friendshipsProjection(store: DocumentStore): Projection {
  const friendships = store.collection<FriendshipDoc>(FRIENDSHIPS);
  return {
    name: 'friendships',
    topics: [SOCIAL_TOPIC],
    async setup() {
      await friendships.createIndex({ users: 1 });
    },
    async apply(event) {
      const e = event as SocialEvent;
      switch (e.type) {
        case 'FrodadRequested':
        case 'FrodadRequestAccepted': {
          const { fromId, toId } = e.data;
          const users = [fromId, toId].sort() as [string, string];
          const status = e.type === 'FrodadRequested' ? 'requested' : 'friends';
          await friendships.replaceOne({ _id: pairId(fromId, toId) }, { _id: pairId(fromId, toId), users, status, fromId, toId }, { upsert: true });
          return;
        }
        case 'FrodadRequestRejected':
          await friendships.deleteOne({ _id: pairId(e.data.fromId, e.data.toId) });
          return;
        case 'FrodadRemoved':
          await friendships.deleteOne({ _id: pairId(e.data.byId, e.data.otherId) });
          return;
        default: {
          const unknown: never = e;
          throw new Error(`unhandled ${JSON.stringify(unknown)}`);
        }
      }
    },
  };
}
