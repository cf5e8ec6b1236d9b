import { CASTIES_TOPIC, castieRules, type CastieEvent } from '@castie/contracts';
import { collectionSpec, updateOnce, type Collection, type Doc, type Projection } from '@castie/platform';

export interface CommentDoc extends Doc {
  castieId: string;
  userId: string;
  text: string;
  postedAt: string;
  deleted: boolean;
  /** Distinct users who reported it: hidden from each at once, from everyone at the third. */
  reporters: string[];
}

/** How many comments of a Castie are shown to everyone (`_id`: the Castie's uuid). */
export interface CommentCountDoc extends Doc {
  shown: number;
}

/** Indexes: a Castie's comments newest first; a person's comments (deleted with their account). */
export const COMMENTS = collectionSpec<CommentDoc>({
  name: 'castie_comments',
  arrays: ['reporters'],
  indexes: [{ keys: { castieId: 1, deleted: 1, postedAt: -1, _id: -1 } }, { keys: { userId: 1, deleted: 1, _id: 1 } }],
});
export const COMMENT_COUNTS = collectionSpec<CommentCountDoc>({ name: 'castie_comment_counts' });

/** Shown to everyone: not deleted, and fewer distinct reporters than hide a comment. */
export const shownToAll = (c: Pick<CommentDoc, 'deleted' | 'reporters'>): boolean => !c.deleted && c.reporters.length < castieRules.commentReportsToHide;

/** commentsCount of many Casties at once (one query), for Castie objects. */
export async function commentCounts(counts: Collection<CommentCountDoc>, castieIds: readonly string[]): Promise<Map<string, number>> {
  const shown = new Map<string, number>();
  for (const [id, c] of await counts.byIds(castieIds)) shown.set(id, Math.max(0, c.shown));
  return shown;
}

/**
 * The comments read model, fed by the casties topic: comments with their reporters, and per
 * Castie the number shown to everyone. All events of one comment share its stream, so they
 * arrive in order; the count moves when a comment starts or stops being shown.
 */
export function commentsProjection(): Projection {
  return {
    name: 'comments',
    version: 1,
    topics: [CASTIES_TOPIC],
    collections: [COMMENTS, COMMENT_COUNTS],
    async apply(event, _envelope, record, unit) {
      const e = event as CastieEvent;
      if (e.type !== 'CommentPosted' && e.type !== 'CommentDeleted' && e.type !== 'CommentReported') return;
      const comments = unit.collection(COMMENTS);
      const counts = unit.collection(COMMENT_COUNTS);
      const { commentId, castieId } = e.data;
      const before = await comments.findOne({ _id: commentId });
      const applied =
        e.type === 'CommentPosted'
          ? await updateOnce(comments, commentId, record, { $set: { castieId, userId: e.data.userId, text: e.data.text, postedAt: e.data.postedAt }, $setOnInsert: { deleted: false, reporters: [] } })
          : e.type === 'CommentDeleted'
            ? await updateOnce(comments, commentId, record, { $set: { deleted: true } }, { upsert: false })
            : await updateOnce(comments, commentId, record, { $addToSet: { reporters: e.data.reporterId } }, { upsert: false });
      if (!applied) return;
      const after = await comments.findOne({ _id: commentId });
      const delta = Number(after !== null && after.castieId !== undefined && shownToAll(after)) - Number(before !== null && before.castieId !== undefined && shownToAll(before));
      if (delta !== 0) await updateOnce(counts, castieId, record, { $inc: { shown: delta } });
    },
  };
}
