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
import type { DocumentStore, Projection } from '@castie/platform';

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

/** A forecast or comment, kept so notifications about it can be worked out when read. */
export interface ActivityDoc {
  _id: string;
  kind: 'forecast' | 'comment';
  castieId: string;
  actorId: string;
  at: string;
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
export const ACTIVITY = 'notification_activity';

export const collections = (store: DocumentStore) => ({
  notifications: store.collection<NotificationDoc>(NOTIFICATIONS),
  casties: store.collection<CastieInfoDoc>(CASTIE_INFO),
  inboxes: store.collection<InboxDoc>(INBOXES),
  activity: store.collection<ActivityDoc>(ACTIVITY),
});

/**
 * Keeps what notifications are made of (decisions.md "Who is notified"). Self-contained events
 * become notifications at once: friend requests (removed once accepted or rejected), their
 * acceptance, group access granted, a Castie answered (every forecaster). Forecasts and comments
 * are kept as activity, and the notifications that depend on who is whose friend, who follows
 * which group or who created which Castie are worked out when read (views.ts): the log does not
 * order events across topics and partitions, so deciding them here would depend on which arrived
 * first, and a rebuild could differ from what users saw.
 */
export function notificationsProjection(store: DocumentStore): Projection {
  const { notifications, casties, inboxes, activity } = collections(store);

  return {
    name: 'notifications',
    topics: [SOCIAL_TOPIC, GROUPS_TOPIC, CASTIES_TOPIC, NOTIFICATIONS_TOPIC],
    async setup() {
      await notifications.createIndex({ userId: 1, createdAt: -1 });
      await activity.createIndex({ castieId: 1 });
      await activity.createIndex({ actorId: 1 });
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
        case 'ForecastPlaced':
          await activity.replaceOne({ _id: envelope.id }, { _id: envelope.id, kind: 'forecast', castieId: e.data.castieId, actorId: e.data.userId, at }, { upsert: true });
          return;
        case 'CastieAnswered':
          await casties.updateOne({ _id: e.data.castieId }, { $set: { answered: true } });
          for (const score of e.data.scores) {
            await put({ _id: `answered:${e.data.castieId}:${score.userId}`, userId: score.userId, type: 'castie-answered', actorId: null, castieId: e.data.castieId, groupSlug: e.data.groupSlug, createdAt: at });
          }
          return;
        case 'CommentPosted':
          await activity.replaceOne({ _id: `comment:${e.data.commentId}` }, { _id: `comment:${e.data.commentId}`, kind: 'comment', castieId: e.data.castieId, actorId: e.data.userId, at }, { upsert: true });
          return;
        case 'CommentDeleted':
          await activity.deleteOne({ _id: `comment:${e.data.commentId}` });
          return;
        case 'CastieReported':
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
