import { z } from 'zod';
import { defineEventCatalog, type EventOf } from './catalog.ts';

/**
 * Topic `casties`, written only by the casties service.
 * Streams: `castie-<uuid>` (the question, its options, its answer and the scores it gave),
 * `forecast-<uuid>-<userId>` (one user's forecast on one Castie: its own stream, so one forecast
 * per user per Castie is a stream that can only be created once, and many users forecasting one
 * Castie never contend), `comment-<commentUUID>` (a comment and its reports).
 */
export const CASTIES_TOPIC = 'casties';

const userId = z.string().regex(/^[0-9a-f]{32}$/);
const castieId = z.string().regex(/^[0-9a-f]{32}$/);
const instant = z.string().datetime();
/** Each forecast's outcome and points (decisions.md: 10 + round(90 × (1 − share)) when correct, else 0). */
const scores = z.array(z.object({ userId, forecastId: z.number().int(), correct: z.boolean(), points: z.number().int().nonnegative() }));

export const castieEvents = defineEventCatalog(CASTIES_TOPIC, {
  CastieCreated: z.object({
    castieId,
    groupSlug: z.string(),
    creatorId: userId,
    question: z.string(),
    showUsername: z.boolean(),
    allowWriteIn: z.boolean(),
    /** Set answer options, each with its integer answer id. Empty for write-in Casties. */
    options: z.array(z.object({ answerId: z.number().int(), text: z.string() })),
    /** Closing instant; null for open-ended Casties. */
    endsAt: instant.nullable(),
    /** Closing date and time as the creator entered them (service time zone). */
    endDate: z.string().nullable(),
    endTime: z.string().nullable(),
    createdAt: instant,
  }),
  ForecastPlaced: z.object({
    castieId,
    groupSlug: z.string(),
    userId,
    forecastId: z.number().int(),
    /** The chosen option; null for write-in forecasts. */
    answerId: z.number().int().nullable(),
    text: z.string(),
    placedAt: instant,
  }),
  /**
   * The creator entered the correct answer. `scores` lists every forecast with its outcome and
   * points (decisions.md: 10 + round(90 × (1 − share)) when correct, else 0): XP, accuracy and
   * leaderboards are built from it.
   */
  CastieAnswered: z.object({
    castieId,
    groupSlug: z.string(),
    correctAnswerId: z.number().int().nullable(),
    /** The correct option's text, or the write-in keyword (the API's correctIndex). */
    correctText: z.string(),
    answeredAt: instant,
    scores,
  }),
  /**
   * Forecasts an answered Castie's scores left out, scored after it: a forecast decided while its
   * open-ended Castie was still open, and appended while the answer was being given (see
   * services/casties/src/casties/late-forecasts-policy.ts). Counted everywhere as the scores of
   * CastieAnswered are; the points already given stand.
   */
  ForecastsScored: z.object({ castieId, groupSlug: z.string(), scores }),
  CastieReported: z.object({ castieId, reporterId: userId }),
  CommentPosted: z.object({ commentId: castieId, castieId, userId, text: z.string(), postedAt: instant }),
  CommentDeleted: z.object({ commentId: castieId, castieId, userId }),
  CommentReported: z.object({ commentId: castieId, castieId, reporterId: userId }),
});
export type CastieEvent = EventOf<typeof castieEvents.schemas>;
