import {
  CASTIES_TOPIC,
  GROUPS_TOPIC,
  NOTIFICATIONS_TOPIC,
  SOCIAL_TOPIC,
  type CastieEvent,
  type GroupEvent,
  type NotificationEvent,
  type NotificationType,
  type SocialEvent,
} from '@castie/contracts';
import { updateOnce, type DocumentStore, type Projection, type Update } from '@castie/platform';
import type { GroupDirectory, People } from '@castie/reference';

/**
 * A stored notification. Texts are not stored: handles, questions and group names are looked up
 * when the list is shown, so a renamed handle reads right. Grouped kinds (a Castie forecasted by
 * several people) keep one document that counts until the user reads it.
 */
export interface NotificationDoc {
  _id: string;
  userId: string;
  type: NotificationType;
  /** The user who caused it (sender, forecaster, commenter), when there is one. */
  actorId: string | null;
  castieId: string | null;
  groupSlug: string | null;
  /** How many events this notification stands for (grouped kinds). */
  count: number;
  createdAt: string;
  [key: string]: unknown;
}

/** What notifications need to know of a Castie. */
export interface CastieInfoDoc {
  _id: string;
  question: string;
  creatorId: string;
  groupSlug: string;
  endsAt: string | null;
  answered: boolean;
  createdAt: string;
  [key: string]: unknown;
}

/** When a user last opened their notifications. */
export interface InboxDoc {
  _id: string;
  lastRetrievedAt: string | null;
  lastSignedInAt: string | null;
  [key: string]: unknown;
}

export const NOTIFICATIONS = 'notifications';
export const CASTIE_INFO = 'notification_casties';
export const INBOXES = 'inboxes';

export const collections = (store: DocumentStore) => ({
  notifications: store.collection<NotificationDoc>(NOTIFICATIONS),
  casties: store.collection<CastieInfoDoc>(CASTIE_INFO),
  inboxes: store.collection<InboxDoc>(INBOXES),
});

/**
 * Turns the other services' events into notifications (decisions.md "Who is notified"):
 * friend requests and their acceptance, group access granted, a Castie forecasted (its creator;
 * one per Castie until read), forecasted or commented by a friend who follows the group, and a
 * Castie answered (every forecaster). Requests are removed once accepted or rejected. Needs-answer
 * and new-Casties notifications are derived when read (see views.ts), never stored.
 */
export function notificationsProjection(store: DocumentStore, people: People, groups: GroupDirectory): Projection {
  const { notifications, casties, inboxes } = collections(store);

  /** A grouped notification: counts up while unread, starts again at 1 once read. */
  async function bump(id: string, record: Parameters<typeof updateOnce>[2], fields: Omit<NotificationDoc, '_id' | 'count' | '_applied'>) {
    const [existing, inbox] = await Promise.all([notifications.findOne({ _id: id }), inboxes.findOne({ _id: fields.userId })]);
    const unread = existing && (!inbox?.lastRetrievedAt || existing.createdAt > inbox.lastRetrievedAt);
    await updateOnce(notifications, id, record, (unread ? { $set: fields, $inc: { count: 1 } } : { $set: { ...fields, count: 1 } }) as Update);
  }

  async function friendsFollowing(userId: string, slug: string): Promise<string[]> {
    const [friends, followers] = await Promise.all([people.friendIds(userId), groups.followerIds(slug)]);
    const following = new Set(followers);
    return friends.filter((f) => following.has(f));
  }

  return {
    name: 'notifications',
    topics: [SOCIAL_TOPIC, GROUPS_TOPIC, CASTIES_TOPIC, NOTIFICATIONS_TOPIC],
    async setup() {
      await notifications.createIndex({ userId: 1, createdAt: -1 });
      await casties.createIndex({ creatorId: 1 });
      await casties.createIndex({ groupSlug: 1, createdAt: -1 });
    },
    async apply(event, envelope, record) {
      const at = envelope.occurredAt;
      const put = (doc: Omit<NotificationDoc, 'count'>) => notifications.replaceOne({ _id: doc._id }, { ...doc, count: 1 } as NotificationDoc, { upsert: true });

      if (record.topic === SOCIAL_TOPIC) {
        const e = event as SocialEvent;
        if (e.type === 'FrodadRequested') {
          await put({ _id: `request:${e.data.fromId}:${e.data.toId}`, userId: e.data.toId, type: 'friend-request-received', actorId: e.data.fromId, castieId: null, groupSlug: null, createdAt: at });
        } else if (e.type === 'FrodadRequestAccepted') {
          await notifications.deleteOne({ _id: `request:${e.data.fromId}:${e.data.toId}` });
          await put({ _id: `accepted:${e.data.fromId}:${e.data.toId}`, userId: e.data.fromId, type: 'friend-request-accepted', actorId: e.data.toId, castieId: null, groupSlug: null, createdAt: at });
        } else if (e.type === 'FrodadRequestRejected') {
          await notifications.deleteOne({ _id: `request:${e.data.fromId}:${e.data.toId}` });
        }
        return;
      }

      if (record.topic === GROUPS_TOPIC) {
        const e = event as GroupEvent;
        if (e.type === 'GroupAccessGranted') {
          await put({ _id: `granted:${e.data.slug}:${e.data.userId}`, userId: e.data.userId, type: 'group-access-granted', actorId: null, castieId: null, groupSlug: e.data.slug, createdAt: at });
        }
        return;
      }

      if (record.topic === NOTIFICATIONS_TOPIC) {
        const e = event as NotificationEvent;
        if (e.type === 'NotificationsRetrieved') {
          const inbox = await inboxes.findOne({ _id: e.data.userId });
          if (!inbox?.lastRetrievedAt || inbox.lastRetrievedAt < e.data.at) {
            await inboxes.updateOne({ _id: e.data.userId }, { $set: { lastRetrievedAt: e.data.at }, $setOnInsert: { lastSignedInAt: null } }, { upsert: true });
          }
        } else if (e.type === 'SignedIn') {
          await inboxes.updateOne({ _id: e.data.userId }, { $set: { lastSignedInAt: e.data.at }, $setOnInsert: { lastRetrievedAt: null } }, { upsert: true });
        }
        return;
      }

      const e = event as CastieEvent;
      switch (e.type) {
        case 'CastieCreated':
          await casties.replaceOne(
            { _id: e.data.castieId },
            { _id: e.data.castieId, question: e.data.question, creatorId: e.data.creatorId, groupSlug: e.data.groupSlug, endsAt: e.data.endsAt, answered: false, createdAt: e.data.createdAt },
            { upsert: true },
          );
          return;
        case 'ForecastPlaced': {
          const castie = await casties.findOne({ _id: e.data.castieId });
          if (castie && castie.creatorId !== e.data.userId) {
            await bump(`forecasted:${e.data.castieId}`, record, { userId: castie.creatorId, type: 'castie-forecasted', actorId: e.data.userId, castieId: e.data.castieId, groupSlug: e.data.groupSlug, createdAt: at });
          }
          // The creator already hears of every forecast; friends who follow the group hear of this one.
          for (const friendId of await friendsFollowing(e.data.userId, e.data.groupSlug)) {
            if (friendId === castie?.creatorId) continue;
            await bump(`friend-forecasted:${e.data.castieId}:${friendId}`, record, { userId: friendId, type: 'castie-friend-forecasted', actorId: e.data.userId, castieId: e.data.castieId, groupSlug: e.data.groupSlug, createdAt: at });
          }
          return;
        }
        case 'CastieAnswered':
          await casties.updateOne({ _id: e.data.castieId }, { $set: { answered: true } });
          for (const score of e.data.scores) {
            await put({ _id: `answered:${e.data.castieId}:${score.userId}`, userId: score.userId, type: 'castie-answered', actorId: null, castieId: e.data.castieId, groupSlug: e.data.groupSlug, createdAt: at });
          }
          return;
        case 'CommentPosted': {
          const castie = await casties.findOne({ _id: e.data.castieId });
          if (!castie) return;
          for (const friendId of await friendsFollowing(e.data.userId, castie.groupSlug)) {
            await bump(`friend-commented:${e.data.castieId}:${friendId}`, record, { userId: friendId, type: 'castie-friend-commented', actorId: e.data.userId, castieId: e.data.castieId, groupSlug: castie.groupSlug, createdAt: at });
          }
          return;
        }
        case 'CastieReported':
        case 'CommentDeleted':
        case 'CommentReported':
          return;
        default: {
          const unknown: never = e;
          throw new Error(`unhandled ${JSON.stringify(unknown)}`);
        }
      }
    },
  };
}
