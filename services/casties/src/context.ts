import { castieEvents, CASTIES_TOPIC, DomainError, GROUPS_TOPIC, messages } from '@castie/contracts';
import { CommandHandler, type Clock, type DocumentStore, type EventLog, type EventStore, type LogPosition } from '@castie/platform';
import { catchUpWith, GroupDirectory, People } from '@castie/reference';
import { castieDecider, castieStreamId, type CastieFacts } from './casties/decider.ts';
import { commentDecider } from './comments/decider.ts';
import { forecastDecider } from './forecasting/decider.ts';
import { CastieObjects } from './read-model/castie-objects.ts';
import { COMMENTS, FORECASTS, VIEWS, type CastieView, type CommentDoc, type ForecastDoc } from './read-model/projection.ts';

export interface CastiesDeps {
  /** Event store of the `casties` topic (this service is its only writer). */
  store: EventStore;
  /** This service's read models: its own, plus its copies of people, friendships and groups. */
  documents: DocumentStore;
  log: EventLog;
  clock: Clock;
  /** IANA time zone in which end dates and times are read and all dates are shown. */
  timeZone: string;
  /** Waits until the read models have applied these positions (the projection runner). */
  waitFor(positions: readonly LogPosition[], timeoutMs: number): Promise<boolean>;
  checkResponses?: boolean;
}

/** What the features of the casties service share. */
export function castiesContext(deps: CastiesDeps) {
  const casties = new CommandHandler(deps.store, castieEvents, castieDecider);
  const forecasts = new CommandHandler(deps.store, castieEvents, forecastDecider);
  const comments = new CommandHandler(deps.store, castieEvents, commentDecider);
  // A person who just signed up or a group an operator just created is outside any user's
  // session: before answering 404 for them, let the copy catch up with the log.
  const readModels = { waitFor: deps.waitFor };
  const people = new People(deps.documents, deps.timeZone, { catchUp: catchUpWith(deps.log, readModels) });
  const groups = new GroupDirectory(deps.documents, people, { catchUp: catchUpWith(deps.log, readModels, { topic: GROUPS_TOPIC }) });
  const views = deps.documents.collection<CastieView>(VIEWS);
  const forecastDocs = deps.documents.collection<ForecastDoc>(FORECASTS);
  const commentDocs = deps.documents.collection<CommentDoc>(COMMENTS);
  const objects = new CastieObjects({ views, forecasts: forecastDocs, people, timeZone: deps.timeZone, clock: deps.clock });

  /** The Castie's view if it exists and the requester may see it; 404 otherwise (decisions.md). */
  async function visibleView(castieId: string, requesterId: string): Promise<CastieView> {
    const view = await views.findOne({ _id: castieId });
    if (!view || !view.createdAt || !(await groups.canSee(requesterId, view.groupSlug))) throw new DomainError('object_not_found', messages.castieNotFound);
    return view;
  }

  /** The Castie as its stream says now, visible to the requester; 404 otherwise. */
  async function visibleFacts(castieId: string, requesterId: string): Promise<{ facts: CastieFacts; state: Awaited<ReturnType<typeof casties.load>>['state'] }> {
    const { state } = await casties.load(castieStreamId(castieId));
    if (state.status === 'none' || !(await groups.canSee(requesterId, state.castie.groupSlug))) throw new DomainError('object_not_found', messages.castieNotFound);
    return { facts: state.castie, state };
  }

  /** Resolves once the read models have applied everything the casties topic holds now. */
  async function settled(timeoutMs = 5000): Promise<void> {
    const ends = await deps.log.endOffsets(CASTIES_TOPIC);
    const positions = [...ends].filter(([, end]) => end > 0).map(([partition, end]) => ({ topic: CASTIES_TOPIC, partition, offset: end - 1 }));
    if (positions.length > 0) await deps.waitFor(positions, timeoutMs);
  }

  return { ...deps, casties, forecasts, comments, people, groups, views, forecastDocs, commentDocs, objects, visibleView, visibleFacts, settled };
}
export type CastiesContext = ReturnType<typeof castiesContext>;
