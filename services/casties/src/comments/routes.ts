import { api, apiDate, apiTime, castieRules, DomainError, type CastieEvent, type CommentObject } from '@castie/contracts';
import { instantKey, keysetPage, newId, route, wantsPage, type Caller, type Clock, type Collection, type CommandHandler, type RouteOptions } from '@castie/platform';
import type { People } from '@castie/reference';
import type { FastifyInstance } from 'fastify';
import type { VisibleCasties } from '../casties/visibility.ts';
import { commentNotFound, commentStreamId, type CommentCommand, type CommentState } from './decider.ts';
import type { CommentDoc } from './read-model.ts';

export interface CommentRoutesDeps {
  comments: CommandHandler<CommentCommand, CastieEvent, CommentState>;
  commentDocs: Collection<CommentDoc>;
  visible: VisibleCasties;
  people: Pick<People, 'activeByIds'>;
  clock: Clock;
  timeZone: string;
  routeOptions: RouteOptions;
}

/** Comments on Casties, their deletion by the author and reports (decisions.md: hidden at 3 reporters). */
export function commentRoutes(app: FastifyInstance, ctx: CommentRoutesDeps): void {
  const opts = ctx.routeOptions;
  const meta = (caller: Caller) => ({ actor: caller.userId, now: ctx.clock.now() });

  route(
    app,
    api.casties.comment,
    async ({ caller, params, body, wrote }) => {
      const { facts } = await ctx.visible.facts(params.uuid, caller.userId);
      const commentId = newId();
      const now = ctx.clock.now();
      const posted = await ctx.comments.handle(commentStreamId(commentId), { type: 'PostComment', commentId, castieId: facts.castieId, userId: caller.userId, text: body.commentText, now }, { actor: caller.userId, now });
      wrote(posted.positions);
      const event = posted.events[0];
      const text = event?.type === 'CommentPosted' ? event.data.text : (body.commentText ?? '').trim();
      return { handle: caller.handle, commentText: text, comment: 'created successfully', commentUUID: commentId, castieUUID: facts.castieId };
    },
    opts,
  );

  route(
    app,
    api.casties.comments,
    async ({ caller, params, query }) => {
      const view = await ctx.visible.view(params.uuid, caller.userId);
      // Hidden from its reporter at once, from everyone at the third distinct reporter.
      const visibleTo = (c: CommentDoc) => c.reporters.length < castieRules.commentReportsToHide && !c.reporters.includes(caller.userId);
      const filter = { castieId: view._id, deleted: false };
      let docs: CommentDoc[];
      let more = {};
      if (wantsPage(query)) {
        // Newest first in (postedAt, _id); hidden comments and those of deleted accounts are skipped inside the walk.
        const keep = async (batch: CommentDoc[]) => {
          const shown = batch.filter(visibleTo);
          const authors = await ctx.people.activeByIds(shown.map((c) => c.userId));
          return shown.filter((c) => authors.has(c.userId));
        };
        const page = await keysetPage(ctx.commentDocs, query, { filter, key: 'postedAt', direction: -1, parseKey: instantKey, keep });
        docs = page.items;
        more = { has_more: page.hasMore, next_before: page.nextBefore };
      } else {
        docs = (await ctx.commentDocs.find(filter, { sort: { postedAt: -1, _id: -1 } })).filter(visibleTo);
      }
      const authors = await ctx.people.activeByIds(docs.map((c) => c.userId));
      const comments: CommentObject[] = [];
      for (const c of docs) {
        const author = authors.get(c.userId);
        if (!author) continue;
        comments.push({
          handle: author.handle,
          lastName: author.lastName,
          firstName: author.firstName,
          profPic: author.profPic,
          commentUUID: c._id,
          commentText: c.text,
          commentDate: apiDate(c.postedAt, ctx.timeZone),
          commentTime: apiTime(c.postedAt, ctx.timeZone),
          isOffensive: false,
        });
      }
      return { numberComments: comments.length, uuid: view._id, comments, ...more };
    },
    opts,
  );

  route(
    app,
    api.casties.deleteComment,
    async ({ caller, params, wrote }) => {
      const deleted = await ctx.comments.handle(commentStreamId(params.commentUUID), { type: 'DeleteComment', userId: caller.userId }, meta(caller));
      wrote(deleted.positions);
      return { comment: 'deleted' };
    },
    opts,
  );

  route(
    app,
    api.casties.reportComment,
    async ({ caller, params, wrote }) => {
      // Reporting follows the rule of reading: a comment on a Castie the reporter cannot see is
      // unknown to them, exactly like a comment that does not exist.
      const { state } = await ctx.comments.load(commentStreamId(params.uuid));
      if (state.status === 'none') throw commentNotFound();
      await ctx.visible.facts(state.castieId, caller.userId).catch((error: unknown) => {
        throw error instanceof DomainError && error.errorType === 'object_not_found' ? commentNotFound() : error;
      });
      const reported = await ctx.comments.handle(commentStreamId(params.uuid), { type: 'ReportComment', reporterId: caller.userId }, meta(caller));
      wrote(reported.positions);
      return { message: 'comment has been reported' };
    },
    opts,
  );
}
