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
