import { castieEnded, DomainError, internalHeaders, type ExportedCastie, type ExportedComment, type ExportedForecast } from '@castie/contracts';
import { instantKey, keysetPage, type Clock, type Collection } from '@castie/platform';
import type { GroupDirectory } from '@castie/reference';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { CastieView } from '../casties/read-model.ts';
import type { CommentDoc } from '../comments/read-model.ts';
import type { ForecastDoc } from '../forecasting/read-model.ts';

export interface ExportRoutesDeps {
  views: Collection<CastieView>;
  forecasts: Collection<ForecastDoc>;
  commentDocs: Collection<CommentDoc>;
  groups: Pick<GroupDirectory, 'hiddenSlugsFor'>;
  clock: Clock;
  timeZone: string;
}

/** The largest page one internal export request answers. */
export const EXPORT_PAGE_MAX = 1000;

const PageQuery = z.object({
  after: z.string().max(200).optional(),
  limit: z.coerce.number().int().min(1).max(EXPORT_PAGE_MAX).default(500),
});

function callerId(request: FastifyRequest): string {
  const userId = request.headers[internalHeaders.userId];
  if (typeof userId !== 'string' || userId === '') throw new DomainError('authentication_failed', 'credentials are required');
  return userId;
}

function pageQuery(request: FastifyRequest) {
  const parsed = PageQuery.safeParse(request.query ?? {});
  if (!parsed.success) throw new DomainError('missing_request_data', 'after/limit are malformed');
  return parsed.data;
}

/**
 * Internal routes of the own-data export (`GET /api/export/`, assembled by the gateway): one page
 * of the caller's Casties, forecasts or comments at a time, `{ items, next }`, in `_id` order
 * (forecasts: newest first) from an index that starts with the owner, so a person with 100k
 * forecasts is read in pages of at most
 * EXPORT_PAGE_MAX and never held whole. `next` is the cursor of the following page (null at the
 * end). They are not in the public routing table: the gateway alone reaches them, with the
 * caller's identity in the internal headers, and they answer only the caller's own records, shown
 * as the app shows them to that caller (Casties of groups the caller may no longer see are left
 * out, as in the profile sections; no other person's forecasts, only counts).
 */
export function exportRoutes(app: FastifyInstance, ctx: ExportRoutesDeps): void {
  const page = <T extends { _id: string }>(docs: T[], limit: number) => ({ docs, next: docs.length === limit ? docs[docs.length - 1]!._id : null });

  app.get('/internal/export/forecasts/', async (request) => {
    const userId = callerId(request);
    const { after, limit } = pageQuery(request);
    // Newest first, through the index of a person's forecasts by time that profiles read: a
    // second index by (userId, _id) for this alone cost every forecast one more page written.
    const found = await keysetPage(ctx.forecasts, { limit, ...(after ? { before: after } : {}) }, { filter: { userId }, key: 'placedAt', direction: -1, parseKey: instantKey });
    const [docs, next] = [found.items, found.nextBefore];
    const hidden = new Set(await ctx.groups.hiddenSlugsFor(userId));
    const shown = docs.filter((f) => !hidden.has(f.groupSlug));
    const views = await ctx.views.byIds(shown.map((f) => f.castieId));
    const now = ctx.clock.now();
    const items = shown.flatMap((f): ExportedForecast[] => {
      const view = views.get(f.castieId);
      if (!view) return [];
      const ended = castieEnded(view, now);
      return [
        {
          forecast_id: f.forecastId,
          uuid: view._id,
          group: view.groupSlug,
          question: view.question,
          forecast: f.text,
          answer_id: f.answerId,
          placed_at: f.placedAt,
          is_active: !ended,
          endDate: view.endDate,
          endTime: view.endTime,
          answerSubmitted: view.answered,
          is_correct: view.answered ? f.correct === true : null,
          points_earned: f.points,
        },
      ];
    });
    return { status: 200, items, next };
  });

  app.get('/internal/export/casties/', async (request) => {
    const userId = callerId(request);
    const { after, limit } = pageQuery(request);
    const { docs, next } = page(await ctx.views.find({ creatorId: userId, ...(after ? { _id: { $gt: after } } : {}) }, { sort: { _id: 1 }, limit }), limit);
    const hidden = new Set(await ctx.groups.hiddenSlugsFor(userId));
    const items: ExportedCastie[] = docs
      .filter((v) => !hidden.has(v.groupSlug) && v.createdAt !== null)
      .map((v) => ({
        uuid: v._id,
        group: v.groupSlug,
        question: v.question,
        showUsername: v.showUsername,
        allowWriteIn: v.allowWriteIn,
        answer_options: v.options.map((o) => ({ answer_id: o.answerId, text: o.text })),
        created_at: v.createdAt,
        endDate: v.endDate,
        endTime: v.endTime,
        forecasts: v.forecastsCount,
        answered: v.answered,
        correct_answer_id: v.correctAnswerId,
        correct_text: v.correctText,
      }));
    return { status: 200, items, next };
  });

  app.get('/internal/export/comments/', async (request) => {
    const userId = callerId(request);
    const { after, limit } = pageQuery(request);
    const { docs, next } = page(await ctx.commentDocs.find({ userId, deleted: false, ...(after ? { _id: { $gt: after } } : {}) }, { sort: { _id: 1 }, limit }), limit);
    const hidden = new Set(await ctx.groups.hiddenSlugsFor(userId));
    const views = await ctx.views.byIds(docs.map((c) => c.castieId));
    const items = docs.flatMap((c): ExportedComment[] => {
      const view = views.get(c.castieId);
      if (!view || hidden.has(view.groupSlug)) return [];
      return [{ uuid: c._id, castie: c.castieId, question: view.question, text: c.text, posted_at: c.postedAt }];
    });
    return { status: 200, items, next };
  });
}
