import { castieEvents, CASTIES_TOPIC, DomainError, IDENTITY_TOPIC, identityEvents } from '@castie/contracts';
import { CommandHandler, policyEventOf, POLICY_BATCH, type Clock, type DocumentStore, type EventLog, type EventStore, type ReadModels, type Subscription } from '@castie/platform';
import type { FastifyBaseLogger } from 'fastify';
import { commentDecider, commentStreamId } from './decider.ts';
import { COMMENTS } from './read-model.ts';

/**
 * A policy: when identity announces a deleted account, the person's comments are deleted too
 * (decisions.md: deleted accounts vanish), as CommentDeleted events like any author's delete, so
 * comment lists and commentsCount agree and a rebuild replays the same history. Idempotent: a
 * comment already deleted is refused by its decider and skipped, so redelivery changes nothing.
 */
export async function startAccountDeletedPolicy(options: {
  log: EventLog;
  store: EventStore;
  documents: DocumentStore;
  clock: Clock;
  /** The service's read models: the comments posted a moment before the deletion must be in them. */
  readModels: ReadModels;
  logger?: FastifyBaseLogger;
}): Promise<Subscription> {
  const comments = options.documents.collection(COMMENTS);
  const handler = new CommandHandler(options.store, castieEvents, commentDecider);
  return options.log.subscribe({
    group: 'casties-account-deleted-policy',
    topics: [IDENTITY_TOPIC],
    startAt: () => 'committed',
    maxBatch: POLICY_BATCH,
    handle: async (records) => {
      for (const record of records) {
        const event = policyEventOf(identityEvents, record);
        if (event?.type !== 'AccountDeleted') continue;
        const userId = event.data.userId;
        // Comments posted a moment before the deletion may not be in the read model yet. Until
        // they are, the batch fails and the log delivers it again: looked up from a read model
        // behind, the comments it lacked would stay, under an account that is gone.
        if (!(await options.readModels.catchUp([CASTIES_TOPIC], 5000))) throw new Error(`the comments of deleted account ${userId} are deleted once the casties read models have caught up`);
        for (const comment of await comments.find({ userId, deleted: false })) {
          try {
            await handler.handle(commentStreamId(comment._id), { type: 'DeleteComment', userId }, { actor: 'system', now: options.clock.now() });
          } catch (error) {
            if (!(error instanceof DomainError)) throw error;
          }
        }
        options.logger?.info({ userId }, 'comments of a deleted account deleted');
      }
    },
  });
}
