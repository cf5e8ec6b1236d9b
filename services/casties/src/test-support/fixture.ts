import { castieEvents, groupEvents, identityEvents, internalHeaders, socialEvents, type EventCatalog, type GroupEvent, type IdentityEvent, type SocialEvent } from '@castie/contracts';
import {
  createFileEventLog,
  createLogEventStore,
  ManualClock,
  newId,
  type DocumentStore,
  type EventStore,
  type ProjectionRunner,
} from '@castie/platform';
import type { FileEventLog } from '@castie/platform/embedded/file-event-log';
import { openSqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import { createStoredSortedSets } from '@castie/platform/embedded/stored-sorted-sets';
import type { FastifyInstance } from 'fastify';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCastiesApp } from '../app.ts';
import { startCastiesReadModels } from '../module.ts';

export interface Person {
  userId: string;
  handle: string;
}

/**
 * The casties service alone on embedded adapters with a frozen clock. The events other services
 * would publish (accounts, groups, follows, friendships) are appended straight to their topics,
 * so the service is tested through its HTTP contract (inject) exactly as the gateway calls it.
 */
export class CastiesFixture {
  app!: FastifyInstance;
  runner!: ProjectionRunner;
  documents!: DocumentStore;
  private stores = new Map<string, EventStore>();
  #storeCount = 0;
  private constructor(
    readonly dir: string,
    readonly log: FileEventLog,
    readonly clock: ManualClock,
    readonly timeZone: string,
  ) {}

  static async start(options: { now?: Date; timeZone?: string } = {}): Promise<CastiesFixture> {
    const dir = await mkdtemp(join(tmpdir(), 'castie-casties-'));
    const log = await createFileEventLog({ dir: join(dir, 'log') });
    const fixture = new CastiesFixture(dir, log, new ManualClock(options.now ?? new Date('2026-03-01T12:00:00Z')), options.timeZone ?? 'UTC');
    await fixture.boot();
    return fixture;
  }

  /** A new read-model store (its own SQLite file in the fixture's directory). */
  newStore(): DocumentStore {
    return openSqliteDocumentStore({ path: join(this.dir, `read-models-${++this.#storeCount}.db`) });
  }

  /** Builds (or rebuilds, on a fresh document store) the read models and the app. */
  async boot(documents: DocumentStore = this.newStore()): Promise<void> {
    this.documents = documents;
    const boards = createStoredSortedSets(documents);
    this.runner = await startCastiesReadModels({ log: this.log, documents, boards });
    this.app = buildCastiesApp({ store: await this.store('casties'), documents, boards, readModels: this.runner, clock: this.clock, timeZone: this.timeZone, checkResponses: true });
    await this.app.ready();
  }

  /** Stops the read models and the app, and closes their store (the log stays). */
  async shutDown(): Promise<void> {
    await this.runner.stop();
    await this.app.close();
    await this.documents.close();
  }

  async store(topic: string): Promise<EventStore> {
    let s = this.stores.get(topic);
    if (!s) this.stores.set(topic, (s = await createLogEventStore({ log: this.log, topic })));
    return s;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private async publish(catalog: EventCatalog<any>, streamId: string, events: readonly (IdentityEvent | GroupEvent | SocialEvent)[]): Promise<void> {
    const store = await this.store(catalog.topic);
    const { version } = await store.readStream(streamId);
    const appended = await store.appendToStream(
      streamId,
      events.map((e) => ({ id: newId(), type: e.type, schemaVersion: 1, streamId, occurredAt: this.clock.now().toISOString(), actor: 'test', data: catalog.check(e).data })),
      { expectedVersion: version === 0 ? 'no_stream' : version },
    );
    await this.runner.waitFor(appended.positions, 5000);
  }

  /** An active person, as identity would announce them. */
  async person(handle = `user${Math.random().toString(36).slice(2, 8)}`): Promise<Person> {
    const userId = newId();
    await this.publish(identityEvents, `account-${userId}`, [
      { type: 'AccountOpened', data: { userId } },
      { type: 'ProfileNamed', data: { userId, handle, firstName: 'Test', lastName: handle } },
      { type: 'SignUpCompleted', data: { userId, profPic: `/media/${handle}.png` } },
    ]);
    return { userId, handle };
  }

  async changePicture(p: Person, profPic: string): Promise<void> {
    await this.publish(identityEvents, `account-${p.userId}`, [{ type: 'ProfilePictureChanged', data: { userId: p.userId, profPic, changedAt: this.clock.now().toISOString() } }]);
  }

  async setPrivate(p: Person, isPrivate: boolean): Promise<void> {
    await this.publish(identityEvents, `account-${p.userId}`, [{ type: 'PrivacyChanged', data: { userId: p.userId, isPrivate } }]);
  }

  /** The person takes another handle (identity's ProfileEdited); returns them under it. */
  async rename(p: Person, handle: string): Promise<Person> {
    await this.publish(identityEvents, `account-${p.userId}`, [{ type: 'ProfileEdited', data: { userId: p.userId, handle } }]);
    return { ...p, handle };
  }

  async deleteAccount(p: Person): Promise<void> {
    await this.publish(identityEvents, `account-${p.userId}`, [{ type: 'AccountDeleted', data: { userId: p.userId, handle: p.handle } }]);
  }

  async group(slug: string, options: { requiresApproval?: boolean; restrictCreation?: boolean } = {}): Promise<void> {
    await this.publish(groupEvents, `group-${slug}`, [
      {
        type: 'GroupCreated',
        data: { slug, groupName: `Group ${slug}`, groupInfoText: 'about', groupIcon: '', requiresApproval: options.requiresApproval ?? false, accessDeniedMessage: 'ask first', restrictCreation: options.restrictCreation ?? false },
      },
    ]);
  }

  async follow(p: Person, slug: string, options: { approval?: boolean } = {}): Promise<void> {
    const events: GroupEvent[] = options.approval
      ? [
          { type: 'GroupAccessRequested', data: { slug, userId: p.userId } },
          { type: 'GroupAccessGranted', data: { slug, userId: p.userId, grantedBy: 'admin' } },
        ]
      : [{ type: 'GroupFollowed', data: { slug, userId: p.userId } }];
    await this.publish(groupEvents, `membership-${slug}-${p.userId}`, events);
  }

  async unfollow(p: Person, slug: string): Promise<void> {
    await this.publish(groupEvents, `membership-${slug}-${p.userId}`, [{ type: 'GroupUnfollowed', data: { slug, userId: p.userId } }]);
  }

  async befriend(a: Person, b: Person): Promise<void> {
    const ids = [a.userId, b.userId].sort();
    await this.publish(socialEvents, `frodads-${ids[0]}-${ids[1]}`, [
      { type: 'FrodadRequested', data: { fromId: a.userId, toId: b.userId } },
      { type: 'FrodadRequestAccepted', data: { fromId: a.userId, toId: b.userId } },
    ]);
  }

  async unfriend(a: Person, b: Person): Promise<void> {
    const ids = [a.userId, b.userId].sort();
    await this.publish(socialEvents, `frodads-${ids[0]}-${ids[1]}`, [{ type: 'FrodadRemoved', data: { byId: a.userId, otherId: b.userId } }]);
  }

  async request(method: 'GET' | 'POST', url: string, as: Person, body?: Record<string, unknown>) {
    const headers: Record<string, string> = { [internalHeaders.userId]: as.userId, [internalHeaders.handle]: encodeURIComponent(as.handle), [internalHeaders.email]: `${as.handle}@example.com` };
    const res = await this.app.inject({ method, url, headers, ...(body ? { payload: body } : {}) });
    // Read your own writes, as the gateway arranges it.
    const written = res.headers[internalHeaders.written];
    if (typeof written === 'string') {
      const positions = written.split(',').map((p) => {
        const [topic, partition, offset] = p.split(':');
        return { topic: topic!, partition: Number(partition), offset: Number(offset) };
      });
      await this.runner.waitFor(positions, 5000);
    }
    return { status: res.statusCode, body: res.json() as Record<string, unknown> & { [k: string]: any } }; // eslint-disable-line @typescript-eslint/no-explicit-any
  }

  get(url: string, as: Person) {
    return this.request('GET', url, as);
  }

  post(url: string, as: Person, body: Record<string, unknown> = {}) {
    return this.request('POST', url, as, body);
  }

  /** Creates a Castie and returns its uuid (fails the test when refused). */
  async castie(as: Person, fields: Record<string, unknown>): Promise<string> {
    const res = await this.post('/api/casties/create/', as, fields);
    if (res.status !== 200) throw new Error(`create failed: ${JSON.stringify(res.body)}`);
    return res.body.castie_uuid as string;
  }

  async close(): Promise<void> {
    await this.shutDown();
    for (const s of this.stores.values()) await s.close();
    await this.log.close();
    await rm(this.dir, { recursive: true, force: true });
  }
}

export { castieEvents };
