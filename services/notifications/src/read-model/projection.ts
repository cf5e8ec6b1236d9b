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
import { collectionSpec, type Doc, type Collections, type Projection } from '@castie/platform';

/**
 * A stored notification. Texts are not stored: handles, questions and group names are looked up
 * when the list is shown, so a renamed handle reads right. Grouped kinds (a Castie forecasted by
 * several people) keep one document that counts until the user reads it.
 */
export interface NotificationDoc extends Doc {
  userId: string;
  type: NotificationType;
  /** The user who caused it (sender, forecaster, commenter), when there is one. */
  actorId: string | null;
  castieId: string | null;
  groupSlug: string | null;
  /** How many events this notification stands for (grouped kinds). */
  count: number;
  createdAt: string;
}

/** What notifications need to know of a Castie. */
export interface CastieInfoDoc extends Doc {
  question: string;
  creatorId: string;
  groupSlug: string;
  endsAt: string | null;
  answered: boolean;
  createdAt: string;
}

/** A forecast or comment, kept so notifications about it can be worked out when read. */
export interface ActivityDoc extends Doc {
  kind: 'forecast' | 'comment';
  castieId: string;
  /**
   * The Castie's group; null while the Castie's creation has not arrived (a comment read before
   * it, from another partition), set when it does.
   */
  groupSlug: string | null;
  actorId: string;
  at: string;
}

/** Activity read before its Castie's creation (a comment from another partition): it gets the group once the creation arrives. */
export interface AwaitingCastieDoc extends Doc {
  /** The activity documents' ids. */
  activityIds: string[];
}

/** When a user last opened their notifications. */
export interface InboxDoc extends Doc {
  lastRetrievedAt: string | null;
  lastSignedInAt: string | null;
}

/** Indexes: a user's notifications newest first. */
/** Indexes: a user's notifications newest first (the id breaking ties: pages beyond the newest 100). */
export const NOTIFICATIONS = collectionSpec<NotificationDoc>({ name: 'notifications', indexes: [{ keys: { userId: 1, createdAt: -1, _id: -1 } }] });
/**
 * Indexes: a creator's Casties newest first (and those waiting for an answer); a group's new
 * Casties (counted in the index, the creator's own left out); Casties by end time (live
 * streams learn which ended since the last look).
 */
export const CASTIE_INFO = collectionSpec<CastieInfoDoc>({ name: 'notification_casties', indexes: [{ keys: { creatorId: 1, createdAt: -1 } }, { keys: { groupSlug: 1, createdAt: -1, creatorId: 1 } }, { keys: { endsAt: 1 } }] });
export const INBOXES = collectionSpec<InboxDoc>({ name: 'inboxes' });
/**
 * Indexes: forecasts on a Castie by time; a person's forecasts and comments by time, with their
 * group in the index so that frodads' activity in the groups one follows is filtered inside the
 * index (a person with 300 frodads has thousands of their events in a week, and only the few in
 * followed groups are read).
 */
export const ACTIVITY = collectionSpec<ActivityDoc>({ name: 'notification_activity', indexes: [{ keys: { castieId: 1, at: -1 } }, { keys: { actorId: 1, at: -1, groupSlug: 1 } }] });

/** By Castie id. */
export const AWAITING_CASTIE = collectionSpec<AwaitingCastieDoc>({ name: 'notification_activity_awaiting_castie', arrays: ['activityIds'] });

export const collections = (store: Collections) => ({
  notifications: store.collection(NOTIFICATIONS),
  casties: store.collection(CASTIE_INFO),
  inboxes: store.collection(INBOXES),
  activity: store.collection(ACTIVITY),
  awaitingCastie: store.collection(AWAITING_CASTIE),
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
export function notificationsProjection(): Projection {

  return {
    name: 'notifications',
    // 2: activity documents carry their Castie's group.
    version: 2,
    topics: [SOCIAL_TOPIC, GROUPS_TOPIC, CASTIES_TOPIC, NOTIFICATIONS_TOPIC],
    collections: [NOTIFICATIONS, CASTIE_INFO, INBOXES, ACTIVITY, AWAITING_CASTIE],
    async apply(event, envelope, record, unit) {
      const { notifications, casties, inboxes, activity, awaitingCastie } = collections(unit);
      const at = envelope.occurredAt;
      const put = (doc: Omit<NotificationDoc, 'count'>) => notifications.replaceOne({ _id: doc._id }, { ...doc, count: 1 }, { upsert: true });

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
          {
            // Comments read before the creation learn their group now (usually there are none).
            // By id: a query by Castie would scan the table during a rebuild (indexes come last).
            const awaiting = await awaitingCastie.findOne({ _id: e.data.castieId });
            if (awaiting) {
              for (const id of awaiting.activityIds) await activity.updateOne({ _id: id }, { $set: { groupSlug: e.data.groupSlug } });
              await awaitingCastie.deleteOne({ _id: e.data.castieId });
            }
          }
          return;
        case 'ForecastPlaced':
          await activity.replaceOne({ _id: envelope.id }, { _id: envelope.id, kind: 'forecast', castieId: e.data.castieId, groupSlug: e.data.groupSlug, actorId: e.data.userId, at }, { upsert: true });
          return;
        case 'CastieAnswered':
        case 'ForecastsScored':
          if (e.type === 'CastieAnswered') await casties.updateOne({ _id: e.data.castieId }, { $set: { answered: true } });
          for (const score of e.data.scores) {
            await put({ _id: `answered:${e.data.castieId}:${score.userId}`, userId: score.userId, type: 'castie-answered', actorId: null, castieId: e.data.castieId, groupSlug: e.data.groupSlug, createdAt: at });
          }
          return;
        case 'CommentPosted': {
          const id = `comment:${e.data.commentId}`;
          const groupSlug = (await casties.findOne({ _id: e.data.castieId }))?.groupSlug ?? null;
          if (groupSlug === null) await awaitingCastie.updateOne({ _id: e.data.castieId }, { $addToSet: { activityIds: id } }, { upsert: true });
          await activity.replaceOne({ _id: id }, { _id: id, kind: 'comment', castieId: e.data.castieId, groupSlug, actorId: e.data.userId, at }, { upsert: true });
          return;
        }
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
