import { CASTIES_TOPIC, castieEvents, DomainError, messages, type CastieEvent } from '@castie/contracts';
import { CommandHandler, type Collection, type ReadModels } from '@castie/platform';
import type { GroupDirectory } from '@castie/reference';
import { castieDecider, castieStreamId, type CastieCommand, type CastieFacts, type CastieState } from './decider.ts';
import type { CastieView } from './read-model.ts';

/** How long a read waits for the read model to hold a Castie its stream already has. */
const CATCH_UP_MS = 3000;

export type CastieHandler = CommandHandler<CastieCommand, CastieEvent, CastieState>;

/**
 * A Castie as one requester may see it: Casties of an approval-required group exist only for its
 * granted followers, everyone else gets 404 object_not_found (decisions.md), whether they read,
 * forecast, comment or report.
 */
export class VisibleCasties {
  constructor(private readonly deps: { views: Collection<CastieView>; casties: CastieHandler; groups: Pick<GroupDirectory, 'canSee'>; readModels: Pick<ReadModels, 'catchUp'> }) {}

  /**
   * The Castie's view, if it exists and the requester may see it. One created a moment ago by
   * someone else (a link shared at once) may not be in the read model yet: when its stream has
   * it, the read model is caught up before the answer, never a 404 for a Castie that exists.
   */
  async view(castieId: string, requesterId: string): Promise<CastieView> {
    let view = await this.deps.views.findOne({ _id: castieId });
    if (!view?.createdAt) {
      // Only for a requester who may see it: nobody else learns from the wait that it exists.
      const { state } = await this.deps.casties.load(castieStreamId(castieId));
      if (state.status !== 'none' && (await this.deps.groups.canSee(requesterId, state.castie.groupSlug))) {
        await this.deps.readModels.catchUp([CASTIES_TOPIC], CATCH_UP_MS);
        view = await this.deps.views.findOne({ _id: castieId });
      }
    }
    if (!view || !view.createdAt || !(await this.deps.groups.canSee(requesterId, view.groupSlug))) throw new DomainError('object_not_found', messages.castieNotFound);
    return view;
  }

  /** The Castie as its stream says now (always current, unlike the read model), if the requester may see it. */
  async facts(castieId: string, requesterId: string): Promise<{ facts: CastieFacts; state: CastieState }> {
    const { state } = await this.deps.casties.load(castieStreamId(castieId));
    if (state.status === 'none' || !(await this.deps.groups.canSee(requesterId, state.castie.groupSlug))) throw new DomainError('object_not_found', messages.castieNotFound);
    return { facts: state.castie, state };
  }
}

export const castieHandler = (store: ConstructorParameters<typeof CommandHandler>[0]): CastieHandler => new CommandHandler(store, castieEvents, castieDecider);
