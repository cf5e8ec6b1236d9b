import { castieRules, DomainError, type CastieEvent } from '@castie/contracts';
import type { Decider } from '@castie/platform';

/** A comment's life, stream `comment-<commentUUID>`: posted, reported by distinct users, deleted by its author. */
export type CommentState =
  | { status: 'none' }
  | { status: 'posted'; commentId: string; castieId: string; userId: string; reporters: string[] }
  | { status: 'deleted'; commentId: string; castieId: string; userId: string; reporters: string[] };

export type CommentCommand =
  | { type: 'PostComment'; commentId: string; castieId: string; userId: string; text: string | undefined; now: Date }
  | { type: 'DeleteComment'; userId: string }
  | { type: 'ReportComment'; reporterId: string };

const notCreated = (message: string) => new DomainError('comment_not_created', message);
/** The one answer for a comment that does not exist or that the requester cannot see. */
export const commentNotFound = () => new DomainError('object_not_found', 'the requested comment could not be found. make sure you are sending a valid commentUUID');

export const commentDecider: Decider<CommentCommand, CastieEvent, CommentState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'PostComment': {
        if (state.status !== 'none') return [];
        const text = command.text?.trim() ?? '';
        if (!text) throw notCreated('the comment is empty: send commentText');
        if (text.length > castieRules.commentMax) throw notCreated(`a comment can have at most ${castieRules.commentMax} characters`);
        return [{ type: 'CommentPosted', data: { commentId: command.commentId, castieId: command.castieId, userId: command.userId, text, postedAt: command.now.toISOString() } }];
      }
      case 'DeleteComment':
        if (state.status !== 'posted') throw commentNotFound();
        if (state.userId !== command.userId) throw new DomainError('not_allowed', 'only the author of a comment can delete it');
        return [{ type: 'CommentDeleted', data: { commentId: state.commentId, castieId: state.castieId, userId: state.userId } }];
      case 'ReportComment':
        if (state.status !== 'posted') throw commentNotFound();
        if (state.reporters.includes(command.reporterId)) return [];
        return [{ type: 'CommentReported', data: { commentId: state.commentId, castieId: state.castieId, reporterId: command.reporterId } }];
      default: {
        const unknown: never = command;
        throw new Error(`unknown command ${JSON.stringify(unknown)}`);
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'CommentPosted':
        return { status: 'posted', commentId: event.data.commentId, castieId: event.data.castieId, userId: event.data.userId, reporters: [] };
      case 'CommentDeleted':
        return state.status === 'posted' ? { ...state, status: 'deleted' } : state;
      case 'CommentReported':
        return state.status === 'none' ? state : { ...state, reporters: [...state.reporters, event.data.reporterId] };
      default:
        return state;
    }
  },
};

export const commentStreamId = (commentId: string): string => `comment-${commentId}`;
