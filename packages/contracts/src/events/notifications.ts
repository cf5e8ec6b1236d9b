import { z } from 'zod';
import { defineEventCatalog, type EventOf } from './catalog.ts';

/**
 * Topic `notifications`, written only by the notifications service. Stream `inbox-<userId>`:
 * what the user did with their notifications. The notifications themselves are derived from the
 * other services' events, never written here.
 */
export const NOTIFICATIONS_TOPIC = 'notifications';

const userId = z.string().regex(/^[0-9a-f]{32}$/);

export const notificationEvents = defineEventCatalog(NOTIFICATIONS_TOPIC, {
  /** The user opened the Activity section: everything created until `at` is read. */
  NotificationsRetrieved: z.object({ userId, at: z.string().datetime() }),
  /** The user signed in; the client said when it last saw a notification. */
  SignedIn: z.object({ userId, lastSeenDate: z.string(), lastSeenTime: z.string(), at: z.string().datetime() }),
});
export type NotificationEvent = EventOf<typeof notificationEvents.schemas>;
