import type { DomainEvent, EventCatalog } from '@castie/contracts';
import { CommandHandler, type CommandMeta, type CredentialStamps, type Decider, type EventStore, type Handled } from '@castie/platform';

/**
 * The command handler of an aggregate that decides what a person's credentials open (their login,
 * their account): it writes the person's credential stamp before each command and again after one
 * that changed something, so that the credentials a gateway keeps stop counting before the answer.
 */
export class StampedCommandHandler<C, E extends DomainEvent, S> extends CommandHandler<C, E, S> {
  constructor(
    store: EventStore,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    catalog: EventCatalog<any>,
    decider: Decider<C, E, S>,
    private readonly stamps: CredentialStamps,
    private readonly personOf: (streamId: string, command: C) => string,
  ) {
    super(store, catalog, decider);
  }

  override async handle(streamId: string, command: C, meta: CommandMeta): Promise<Handled<S, E>> {
    const person = this.personOf(streamId, command);
    await this.stamps.changed(person);
    const handled = await super.handle(streamId, command, meta);
    if (handled.events.length > 0) await this.stamps.changed(person);
    return handled;
  }
}
