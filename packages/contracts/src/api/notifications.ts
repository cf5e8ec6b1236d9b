import { z } from 'zod';
import { endpoint, ok } from './endpoint.ts';
import { repeated, text } from './form.ts';
import { instantPageQuery, listPageInfo } from './paging.ts';

export const notificationTypes = [
  'friend-request-received',
  'friend-request-accepted',
  'castie-needs-answer',
  'castie-answered',
  'castie-friend-commented',
  'new-casties',
  'castie-forecasted',
  'castie-friend-forecasted',
  'group-access-granted',
] as const;
export const NotificationTypeSchema = z.enum(notificationTypes).meta({ id: 'NotificationType' });
export type NotificationType = z.infer<typeof NotificationTypeSchema>;

/** The Notification object (spec). `id` is null for castie-needs-answer notifications. */
export const NotificationSchema = z.object({
  id: z.string().nullable(),
  created_on_date: z.string(),
  /** HH:mm:ss */
  created_on_time: z.string(),
  timesince_created: z.string(),
  message: z.string(),
  notification_type: NotificationTypeSchema,
  data: z.string(),
}).meta({ id: 'Notification' });
export type Notification = z.infer<typeof NotificationSchema>;

const counts = { number_notifications: z.number().int().nonnegative(), needs_answer: z.boolean(), number_needing_answer: z.number().int().nonnegative() };

export const notificationsApi = {
  list: endpoint({
    method: 'GET',
    paths: ['/api/notifications/'],
    service: 'notifications',
    access: 'user',
    // The service refuses unknown types; the enum documents them (the schema stays a string for the service's own message).
    query: z.object({ notification_type: repeated(z.string().meta({ enum: [...notificationTypes] })), ...instantPageQuery }),
    // Without a filter: `notifications`; with one: one list per requested type, keyed by its name.
    response: ok({ notifications: z.array(NotificationSchema).optional(), ...listPageInfo }).catchall(z.union([z.array(NotificationSchema), z.number()])),
  }),
  initialize: endpoint({
    method: 'GET',
    paths: ['/api/initialize/'],
    service: 'notifications',
    access: 'user',
    response: ok(counts),
  }),
  login: endpoint({
    method: 'POST',
    paths: ['/api/login/'],
    service: 'notifications',
    access: 'user',
    body: z.object({
      last_seen_date: text().pipe(z.iso.date({ error: 'must be a date YYYY-MM-DD' })),
      last_seen_time: text().pipe(z.string().regex(/^\d{1,2}:\d{2}(:\d{2}(\.\d{1,6})?)?$/, 'must be a time HH:MM:SS')),
    }),
    response: ok({ profile_handle: z.string(), ...counts }),
  }),
} as const;

/** The counts of `GET /api/initialize/`: what a live stream sends in each `counts` event. */
export const NotificationCountsSchema = z.object(counts).meta({ id: 'NotificationCounts' });
export type NotificationCounts = z.infer<typeof NotificationCountsSchema>;

/**
 * Live updates (Server-Sent Events). The gateway serves both itself, as it holds the connections
 * and the credentials: the stream's counts come from the notifications service's `initialize`.
 * They are outside the forwarding table (`api`) for that reason.
 */
export const notificationsLiveApi = {
  streamToken: endpoint({
    method: 'POST',
    paths: ['/api/notifications/stream-token/'],
    service: 'notifications',
    access: 'user',
    response: ok({
      token: z.string().meta({ description: 'pass as `?token=` to GET /api/notifications/stream/ (browsers’ EventSource cannot send headers)' }),
      expires_in: z.number().int().positive().meta({ description: 'seconds the token opens streams for' }),
    }),
  }),
  stream: endpoint({
    method: 'GET',
    paths: ['/api/notifications/stream/'],
    service: 'notifications',
    access: 'user',
    query: z.object({ token: z.string().max(512).optional().meta({ description: 'a stream token instead of credentials' }) }),
    response: NotificationCountsSchema,
  }),
} as const;

/** The cache pub/sub channel on which the notifications service says whose counts may have changed. */
export const LIVE_CHANGES_CHANNEL = 'notifications:changed';
/**
 * One message on it, published once the notifications read model committed the change, so counts
 * read after it include it. `users` null: anyone's counts may have changed (an account deleted, a
 * large batch), every open stream checks.
 */
export const LiveChangeSchema = z.object({ users: z.array(z.string()).nullable() });
export type LiveChange = z.infer<typeof LiveChangeSchema>;
