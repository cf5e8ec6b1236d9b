import { z } from 'zod';
import { endpoint, ok } from './endpoint.ts';
import { formBoolean, line, paragraph, repeated, text, textLimits } from './form.ts';
import { GroupObjectSchema } from './groups.ts';
import { HandleParams, profileResponse } from './people.ts';
import { instantPageQuery, listPageInfo, offsetPageInfo, offsetPageQuery } from './paging.ts';

/** Limits of the casties service (spec: Limits; decisions.md: bounded lists). */
export const castieRules = {
  commentMax: 500,
  questionMax: 500,
  optionMax: 200,
  optionsMax: 20,
  minOptions: 2,
  pageDefault: 100,
  pageMax: 500,
  leaderboardDefault: 150,
  /** Distinct reporters that hide a comment from everyone (decisions.md). */
  commentReportsToHide: 3,
} as const;

/** One answer option with its share of the forecasts. `is_correct` only when answered and true. */
export const ForecastOptionSchema = z.object({
  /** Absent for write-in Casties (options are then grouped by answer text). */
  answer_id: z.number().int().optional(),
  answer_text: z.string(),
  percentage: z.number(),
  is_correct: z.literal(true).optional(),
}).meta({ id: 'ForecastOption' });
export type ForecastOption = z.infer<typeof ForecastOptionSchema>;

/** The requester's own forecast on a Castie. */
export const UserForecastSchema = z.object({
  forecast_text: z.string(),
  forecast_id: z.number().int(),
  /** false while the Castie is unanswered. */
  is_correct: z.boolean(),
  /** Absent for write-in Casties. */
  answer_id: z.number().int().optional(),
}).meta({ id: 'UserForecast' });
export type UserForecast = z.infer<typeof UserForecastSchema>;

const castieCore = {
  uuid: z.string(),
  question: z.string(),
  groupSlug: z.string(),
  showUsername: z.boolean(),
  /** Handle of the creator ('' when the creator's account was deleted). */
  submitter: z.string(),
  createdAtDate: z.string(),
  createdAtTime: z.string(),
  /** Latest forecast; the creation instant while nobody has forecast yet. */
  lastForecastedDate: z.string(),
  lastForecastedTime: z.string(),
  allowWriteIn: z.boolean(),
  setAnswered: z.boolean(),
  openEnded: z.boolean(),
  endDate: z.string().nullable(),
  endTime: z.string().nullable(),
  /** Absent when the requester has not forecast. */
  userForecast: UserForecastSchema.optional(),
  is_answerable: z.boolean(),
  friendCount: z.number().int(),
  commentsCount: z.number().int(),
  answerSubmitted: z.boolean(),
  correctIndex: z.string().nullable(),
  forecastsCount: z.number().int(),
  forecasts: z.array(ForecastOptionSchema),
};

/** The Castie object of home lists, group pages and search (with `forecast_options` in search). */
export const CastieSchema = z.object({
  ...castieCore,
  friendPics: z.array(z.string()),
  forecast_options: z.array(ForecastOptionSchema).optional(),
}).meta({ id: 'Castie', description: 'The Castie object of home lists, group pages and search.' });
export type CastieObject = z.infer<typeof CastieSchema>;

/** A friend's forecast as the detailed Castie shows it. */
export const FriendForecastSchema = z.object({
  handle: z.string(),
  forecast_text: z.string(),
  answer_id: z.number().int().optional(),
  is_correct: z.literal(true).optional(),
}).meta({ id: 'FriendForecast' });

/** The detailed Castie object: friendForecasts (by forecast id) instead of friendPics. */
export const DetailedCastieSchema = z.object({
  ...castieCore,
  friendForecasts: z.record(z.string(), FriendForecastSchema),
}).meta({ id: 'DetailedCastie', description: 'The detailed Castie object: friendForecasts (by forecast id) instead of friendPics.' });
export type DetailedCastie = z.infer<typeof DetailedCastieSchema>;

/** A forecast object of myForecasts / group accuracy, indexed by forecast id. */
export const ForecastObjectSchema = z.object({
  question: z.string(),
  uuid: z.string(),
  forecast: z.string(),
  is_active: z.boolean(),
  endDate: z.string().nullable(),
  endTime: z.string().nullable(),
  /** Present only once the Castie has ended. */
  answerSubmitted: z.boolean().optional(),
  is_correct: z.boolean().optional(),
  points_earned: z.number().int(),
}).meta({ id: 'Forecast', description: 'A forecast of myForecasts and group accuracy, indexed by forecast id.' });
export type ForecastObject = z.infer<typeof ForecastObjectSchema>;

export const CommentSchema = z.object({
  handle: z.string(),
  lastName: z.string(),
  firstName: z.string(),
  profPic: z.string(),
  commentUUID: z.string(),
  commentText: z.string(),
  commentDate: z.string(),
  commentTime: z.string(),
  isOffensive: z.boolean(),
}).meta({ id: 'Comment' });
export type CommentObject = z.infer<typeof CommentSchema>;

export const LeaderboardEntrySchema = z.object({
  handle: z.string(),
  lastName: z.string(),
  firstName: z.string(),
  profPic: z.string(),
  city: z.string(),
  state: z.string(),
  level: z.number().int().optional(),
  xp: z.number().int().optional(),
}).meta({ id: 'LeaderboardEntry' });

/** Bounded pages (decisions.md): `before` is the `next_before` of the previous page. */
const page = {
  limit: z.preprocess((v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v), z.number().int().min(1).max(castieRules.pageMax)).default(castieRules.pageDefault),
  before: z.string().regex(/^\d{4}-\d{2}-\d{2}T[^|]+\|[0-9a-f]{32}$/, 'must be the next_before of a previous page').optional(),
};
const pageInfo = { has_more: z.boolean(), next_before: z.string().nullable() };

const uuidParams = z.object({ uuid: z.string().min(1) });
/** A value that may come as a string (form) or a number (JSON); the domain says what is wrong with it. */
const loose = z
  .union([z.string(), z.number()])
  // Documented as what clients send: the id of one answer option (form fields carry it as digits).
  .meta({ override: { type: 'integer', description: 'id of an answer option of this Castie' } })
  .optional();

/** Which fields a create-Castie request needs, by poll type and answer type (JSON Schema, for the API document). */
const createCastieVariants = {
  allOf: [
    {
      oneOf: [
        { properties: { poll_type: { const: 'Open' } }, required: ['poll_type'], description: 'open-ended: no end date' },
        { properties: { poll_type: { const: 'Regular' } }, required: ['poll_type', 'closes_on_date', 'closes_on_time'], description: 'closes at closes_on_date closes_on_time (service time zone)' },
      ],
    },
    {
      oneOf: [
        { properties: { answer_type: { const: 'Set answer options' }, answer_option: { minItems: castieRules.minOptions } }, required: ['answer_type', 'answer_option'], description: 'one answer_option per option' },
        { properties: { answer_type: { const: 'Write-in answers' } }, required: ['answer_type'], description: 'forecasters write their answer; answer_option is ignored' },
      ],
    },
  ],
};
const castiesList = z.record(z.string(), CastieSchema);

export const castiesApi = {
  createCastie: endpoint({
    method: 'POST',
    paths: ['/api/casties/create/'],
    service: 'casties',
    access: 'user',
    invalidAs: 'castie_not_created',
    body: z.object({
      group_slug: text().pipe(z.string().min(1, 'is required')),
      poll_type: text().pipe(z.enum(['Open', 'Regular'], { error: 'must be Open or Regular' })),
      closes_on_date: z.string().meta({ format: 'date', description: 'YYYY-MM-DD (Regular polls)' }).optional(),
      closes_on_time: z.string().meta({ pattern: '^\\d{1,2}:\\d{2}$', description: 'HH:MM, 24-hour clock (Regular polls)' }).optional(),
      question: paragraph(castieRules.questionMax).pipe(z.string().min(1, 'must not be empty')),
      answer_type: text().pipe(z.enum(['Set answer options', 'Write-in answers'], { error: 'must be "Set answer options" or "Write-in answers"' })),
      answer_option: repeated(line(textLimits.answerOption)).pipe(z.array(z.string()).max(textLimits.answerOptions, `must be at most ${textLimits.answerOptions} options`)),
      display_created_by: formBoolean,
    }).meta(createCastieVariants),
    response: ok({ castie: z.string(), castie_uuid: z.string() }),
  }),
  needsAnswer: endpoint({
    method: 'GET',
    paths: ['/api/casties/needsanswer/'],
    service: 'casties',
    access: 'user',
    response: ok({ needs_answer: z.boolean(), number_needing_answer: z.number().int() }),
  }),
  detail: endpoint({
    method: 'GET',
    paths: ['/api/casties/:uuid/'],
    service: 'casties',
    access: 'user',
    params: uuidParams,
    response: ok({ castie: DetailedCastieSchema }),
  }),
  forecast: endpoint({
    method: 'POST',
    paths: ['/api/casties/:uuid/forecast/'],
    service: 'casties',
    access: 'user',
    params: uuidParams,
    invalidAs: 'cannot_forecast',
    // Write-in Casties take forecast_text, set-answer ones answer_id.
    body: z.object({ forecast_text: line(textLimits.forecastText).optional(), answer_id: loose }).meta({ anyOf: [{ required: ['forecast_text'] }, { required: ['answer_id'] }] }),
    response: ok({ message: z.string(), castie_uuid: z.string(), answer_id: z.number().int().nullable(), user_forecast_text: z.string() }),
  }),
  answerView: endpoint({
    method: 'GET',
    paths: ['/api/casties/:uuid/answer/'],
    service: 'casties',
    access: 'user',
    params: uuidParams,
    response: ok({
      uuid: z.string(),
      question: z.string(),
      group: z.string(),
      allowWriteIn: z.boolean(),
      forecastsCount: z.number().int(),
      /** The samples' spelling of forecastsCount. */
      forecastCount: z.number().int(),
      answer_options: z.record(z.string(), z.string()).optional(),
    }),
  }),
  answer: endpoint({
    method: 'POST',
    paths: ['/api/casties/:uuid/answer/'],
    service: 'casties',
    access: 'user',
    params: uuidParams,
    // Write-in Casties take the keyword, set-answer ones answer_id.
    body: z.object({ keyword: line(textLimits.keyword).optional(), answer_id: loose }).meta({ anyOf: [{ required: ['keyword'] }, { required: ['answer_id'] }] }),
    response: ok({ castie: DetailedCastieSchema }),
  }),
  comments: endpoint({
    method: 'GET',
    paths: ['/api/casties/:uuid/comments/'],
    service: 'casties',
    access: 'user',
    params: uuidParams,
    query: z.object({ ...instantPageQuery }),
    response: ok({ numberComments: z.number().int(), uuid: z.string(), comments: z.array(CommentSchema), ...listPageInfo }),
  }),
  comment: endpoint({
    method: 'POST',
    paths: ['/api/casties/:uuid/comment/'],
    service: 'casties',
    access: 'user',
    params: uuidParams,
    invalidAs: 'comment_not_created',
    body: z.object({ commentText: paragraph(castieRules.commentMax).optional() }),
    response: ok({ handle: z.string(), commentText: z.string(), comment: z.string(), commentUUID: z.string(), castieUUID: z.string() }),
  }),
  deleteComment: endpoint({
    method: 'POST',
    paths: ['/api/comments/:commentUUID/delete/'],
    service: 'casties',
    access: 'user',
    params: z.object({ commentUUID: z.string().min(1) }),
    response: ok({ comment: z.string() }),
  }),
  reportCastie: endpoint({
    method: 'POST',
    paths: ['/api/report/castie/:uuid/'],
    service: 'casties',
    access: 'user',
    params: uuidParams,
    response: ok({ message: z.string() }),
  }),
  reportComment: endpoint({
    method: 'POST',
    paths: ['/api/report/comment/:uuid/'],
    service: 'casties',
    access: 'user',
    params: uuidParams,
    response: ok({ message: z.string() }),
  }),
  home: endpoint({
    method: 'GET',
    paths: ['/api/home/', '/api/home/:tab/'],
    service: 'casties',
    access: 'user',
    params: z.object({ tab: z.enum(['following', 'spicy', 'new'], { error: 'must be following, spicy or new' }).default('following') }),
    query: z.object({ ids: formBoolean.default(false), groups: repeated(z.string()).optional(), ...page }),
    response: ok({
      profile_handle: z.string(),
      following: z.literal(false).optional(),
      casties: castiesList.optional(),
      castie_ids: z.array(z.string()).optional(),
      ...pageInfo,
    }),
  }),
  searchCasties: endpoint({
    method: 'GET',
    paths: ['/api/search/casties/'],
    service: 'casties',
    access: 'user',
    query: z.object({ q: line(textLimits.searchQuery), ...page }),
    response: ok({ search_results: castiesList, ...pageInfo }),
  }),
  myCasties: endpoint({
    method: 'GET',
    paths: ['/api/profile/:handle/mycasties/'],
    service: 'casties',
    access: 'user',
    params: HandleParams,
    query: z.object({ ids_only: formBoolean.default(false), ...instantPageQuery }),
    response: profileResponse('myCasties', z.union([z.record(z.string(), z.object({ question: z.string(), answerable: z.boolean() })), z.array(z.string())])).extend(listPageInfo),
  }),
  stats: endpoint({
    method: 'GET',
    paths: ['/api/profile/:handle/stats/'],
    service: 'casties',
    access: 'user',
    params: HandleParams,
    query: z.object({ ids_only: formBoolean.default(false), ...instantPageQuery }),
    response: profileResponse('myForecasts', z.union([z.record(z.string(), ForecastObjectSchema), z.array(z.string())])).extend(listPageInfo),
  }),
  group: endpoint({
    method: 'GET',
    paths: ['/api/groups/:group_slug/'],
    service: 'casties',
    access: 'user',
    params: z.object({ group_slug: z.string().min(1) }),
    query: z.object({ casties: formBoolean.default(true) }),
    response: GroupObjectSchema.extend({ status: z.literal(200), ranking: z.number().int(), totalRanked: z.number().int(), casties: castiesList.optional() }),
  }),
  groupAccuracy: endpoint({
    method: 'GET',
    paths: ['/api/groups/:group_slug/accuracy/'],
    service: 'casties',
    access: 'user',
    params: z.object({ group_slug: z.string().min(1) }),
    response: ok({
      accuracy: z.object({
        percentCorrect: z.number().int(),
        ranking: z.number().int(),
        totalRanked: z.number().int(),
        /** The sample's name for totalRanked. */
        ranking_outOf: z.number().int(),
        myForecasts: z.record(z.string(), ForecastObjectSchema),
      }),
    }),
  }),
  /**
   * Every board, and a group's `ranking`, in one order: most XP first, equal XP by handle
   * (case-insensitive; digits before letters). Deleted accounts are on none.
   */
  leaderboard: endpoint({
    method: 'GET',
    paths: ['/api/leaderboard/', '/api/leaderboard/:group_slug/'],
    service: 'casties',
    access: 'user',
    params: z.object({ group_slug: z.string().optional() }),
    query: z.object({
      limit: z.preprocess((v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v), z.number().int().min(1).max(1000)).default(castieRules.leaderboardDefault),
      ...offsetPageQuery,
    }),
    response: ok({
      leaderboard_groups: z.array(z.object({ slug: z.string(), groupName: z.string() })),
      leaderboard_profiles: z.array(LeaderboardEntrySchema),
      ...offsetPageInfo,
    }),
  }),
} as const;

