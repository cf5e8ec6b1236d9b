import { z } from 'zod';
import { FrodadRequestEntrySchema, type socialApi } from './social.ts';
import { GroupObjectSchema } from './groups.ts';
import { identityApi } from './identity.ts';
import { NotificationSchema } from './notifications.ts';
import { FrodadSchema, ProfileInfoSchema } from './people.ts';

/** `GET /api/export/`: `format=csv` answers a zip of CSV files instead of the JSON document. */
export const OwnDataExportQuerySchema = z.object({
  format: z.enum(['json', 'csv']).default('json').meta({ description: '`json` (default): one JSON document; `csv`: a zip of CSV files for spreadsheets' }),
});

/** A Casty the requester created, with its answer options and (once given) its answer. */
export const ExportedCastieSchema = z.object({
  uuid: z.string(),
  group: z.string(),
  question: z.string(),
  showUsername: z.boolean(),
  allowWriteIn: z.boolean(),
  answer_options: z.array(z.object({ answer_id: z.number().int(), text: z.string() })),
  created_at: z.string().nullable(),
  endDate: z.string().nullable(),
  endTime: z.string().nullable(),
  /** How many forecasts it received (who forecast what is theirs, not the creator's). */
  forecasts: z.number().int().nonnegative(),
  answered: z.boolean(),
  correct_answer_id: z.number().int().nullable(),
  correct_text: z.string().nullable(),
}).meta({ id: 'ExportedCastie' });
export type ExportedCastie = z.infer<typeof ExportedCastieSchema>;

/** A forecast of the requester with its outcome: is_correct is null until the Castie is answered. */
export const ExportedForecastSchema = z.object({
  forecast_id: z.number().int(),
  uuid: z.string(),
  group: z.string(),
  question: z.string(),
  forecast: z.string(),
  answer_id: z.number().int().nullable(),
  placed_at: z.string(),
  is_active: z.boolean(),
  endDate: z.string().nullable(),
  endTime: z.string().nullable(),
  answerSubmitted: z.boolean(),
  is_correct: z.boolean().nullable(),
  points_earned: z.number().int(),
}).meta({ id: 'ExportedForecast' });
export type ExportedForecast = z.infer<typeof ExportedForecastSchema>;

/** A comment of the requester that is still shown (deleted ones are gone). */
export const ExportedCommentSchema = z.object({
  uuid: z.string(),
  castie: z.string(),
  question: z.string(),
  text: z.string(),
  posted_at: z.string(),
}).meta({ id: 'ExportedComment' });
export type ExportedComment = z.infer<typeof ExportedCommentSchema>;

const withoutStatus = <T extends z.ZodObject>(schema: T) => schema.omit({ status: true } as never);

/**
 * The requester's own data as one JSON document (sections in this order; the gateway streams it).
 * Other people appear only as the requester already sees them in the app: frodads and requests by
 * handle and name, notifications as the Activity section words them.
 */
export const OwnDataExportSchema = z.object({
  status: z.literal(200),
  /** When the export was taken (ISO 8601, UTC). */
  exported_at: z.string(),
  profile: withoutStatus(identityApi.getProfileEdit.response).extend({ email: z.string(), profileInfo: ProfileInfoSchema }),
  preferences: z.object({ is_private: z.boolean() }),
  /** Groups followed or requested (access pending), by slug. */
  groups: z.record(z.string(), GroupObjectSchema),
  frodads: z.record(z.string(), FrodadSchema),
  frodad_requests: z.object({
    requests_received: z.array(FrodadRequestEntrySchema),
    requests_sent: z.array(FrodadRequestEntrySchema),
  }),
  /**
   * Every notification of the requester, worded as the Activity section words them (not only the
   * newest 100 it lists), read without marking them read: first those worked out on reading
   * (castie-needs-answer, then a week's activity and new Casties, newest first), then the stored
   * ones newest first.
   */
  notifications: z.array(NotificationSchema),
  /** The Casty, forecast and comment sections are in id order (stable, cheap to page), not by time: each item has its time. */
  casties: z.array(ExportedCastieSchema),
  forecasts: z.array(ExportedForecastSchema),
  comments: z.array(ExportedCommentSchema),
}).meta({ id: 'OwnDataExport', description: 'Everything of the requester, as one JSON document.' });
export type OwnDataExport = z.infer<typeof OwnDataExportSchema>;

/** Keeps the export's frodad-request section in step with the endpoint it is taken from. */
export type FrodadRequestsAnswer = z.infer<typeof socialApi.frodadRequests.response>;
