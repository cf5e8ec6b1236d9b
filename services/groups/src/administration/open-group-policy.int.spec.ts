import { GROUPS_TOPIC, IDENTITY_TOPIC, identityEvents, type DomainEvent, type EventCatalog } from '@castie/contracts';
import { ManualClock, newId, type EventStore, type ProjectionRunner, type Subscription } from '@castie/platform';
import { createFileEventLog, type FileEventLog } from '@castie/platform/embedded/file-event-log';
import { createLogEventStore } from '@castie/platform/embedded/log-event-store';
import { openSqliteDocumentStore, type SqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { groupsContext, type GroupsContext } from '../context.ts';
import { membershipStreamId, standing } from '../following/membership-decider.ts';
import { startGroupsReadModels } from '../module.ts';
import { groupStreamId } from './group-decider.ts';
import { grantPending, startOpenGroupPolicy } from './open-group-policy.ts';

// A request to join an approval-required group, made at the moment an operator opens the group:
// the request is decided on the group as it was (approval required) and lands on its own stream;
// opening the group lets in the requests the read models list. Either way nobody is left waiting
// for an approval in a group that takes anyone.

let dir: string;
let log: FileEventLog;
let documents: SqliteDocumentStore;
let runner: ProjectionRunner;
let ctx: GroupsContext;
let policy: Subscription;
const stores = new Map<string, EventStore>();
const clock = new ManualClock(new Date('2026-03-01T12:00:00Z'));
const eventually = (check: () => Promise<void>) => vi.waitFor(check, { timeout: 5000, interval: 10 });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'castie-open-group-'));
  log = await createFileEventLog({ dir: join(dir, 'log') });
  for (const topic of [IDENTITY_TOPIC, GROUPS_TOPIC]) stores.set(topic, await createLogEventStore({ log, topic }));
  documents = openSqliteDocumentStore({ path: join(dir, 'groups.db') });
  runner = await startGroupsReadModels({ log, documents });
  ctx = groupsContext({ store: stores.get(GROUPS_TOPIC)!, documents, readModels: runner, clock, timeZone: 'UTC' });
  policy = await startOpenGroupPolicy({ log, ctx });
});
afterAll(async () => {
  await policy.stop();
  await runner.stop();
  await documents.close();
  for (const store of stores.values()) await store.close();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function append(catalog: EventCatalog<any>, streamId: string, ...events: DomainEvent[]) {
  const store = stores.get(catalog.topic)!;
  const { version } = await store.readStream(streamId);
  return store.appendToStream(
    streamId,
    events.map((e) => ({ id: newId(), type: e.type, schemaVersion: 1, streamId, occurredAt: clock.now().toISOString(), actor: 'system', data: catalog.check(e).data })),
    { expectedVersion: version === 0 ? 'no_stream' : version },
  );
}

const signUp = (userId: string, handle: string) =>
  append(identityEvents, `account-${userId}`, { type: 'AccountOpened', data: { userId } }, { type: 'ProfileNamed', data: { userId, handle, firstName: handle, lastName: 'L' } }, { type: 'SignUpCompleted', data: { userId, profPic: '' } });

async function person(handle: string): Promise<{ userId: string; handle: string }> {
  const userId = newId();
  await runner.waitFor((await signUp(userId, handle)).positions, 5000);
  return { userId, handle };
}

async function insiders(slug: string): Promise<void> {
  const created = await ctx.groups.handle(groupStreamId(slug), { type: 'CreateGroup', slug, groupName: slug, groupInfoText: 'about', groupIcon: '', requiresApproval: true, accessDeniedMessage: 'ask first', restrictCreation: false }, ctx.meta('admin'));
  await runner.waitFor(created.positions, 5000);
}

/** The operator opens the group, without the configure route's own look at the requests (as when its read models are late). */
const open = (slug: string) => ctx.groups.handle(groupStreamId(slug), { type: 'ConfigureGroup', requiresApproval: false }, ctx.meta('admin'));

const standingOf = async (slug: string, userId: string) => standing((await ctx.memberships.load(membershipStreamId(slug, userId))).state);

describe('a request to join a group opened at that moment', () => {
  it('lands after the opening: it is granted', async () => {
    await insiders('late');
    const ann = await person('ann');
    // Decided on the group as it was...
    const before = await ctx.loadGroup('late');
    // ...and landing once it is open, and the opening let in whoever waited (nobody yet).
    expect(await policy.waitFor((await open('late')).positions, 5000)).toBe(true);
    const requested = await ctx.memberships.handle(membershipStreamId('late', ann.userId), { type: 'Follow', group: before, userId: ann.userId, handle: ann.handle }, { actor: ann.userId, now: clock.now() });
    expect(standing(requested.state)).toEqual({ following: false, access: 'pending' });
    await eventually(async () => expect(await standingOf('late', ann.userId)).toEqual({ following: true, access: 'granted' }));
    const events = (await stores.get(GROUPS_TOPIC)!.readStream(membershipStreamId('late', ann.userId))).events.map((e) => e.type);
    expect(events).toEqual(['GroupAccessRequested', 'GroupAccessGranted']);
  });

  it('lands before the opening, unseen by it: it is granted once the opening landed', async () => {
    await insiders('missed');
    const bob = await person('bob');
    const requested = await ctx.memberships.handle(membershipStreamId('missed', bob.userId), { type: 'Follow', group: await ctx.loadGroup('missed'), userId: bob.userId, handle: bob.handle }, { actor: bob.userId, now: clock.now() });
    // The policy saw the request while the group still required approval: nothing to do then.
    expect(await policy.waitFor(requested.positions, 5000)).toBe(true);
    expect(await standingOf('missed', bob.userId)).toEqual({ following: false, access: 'pending' });
    await open('missed');
    await eventually(async () => expect(await standingOf('missed', bob.userId)).toEqual({ following: true, access: 'granted' }));
  });

  it("the operator's opening counts as let in those it saw waiting whom the policy let in first", async () => {
    await insiders('raced');
    const dee = await person('dee');
    const requested = await ctx.memberships.handle(membershipStreamId('raced', dee.userId), { type: 'Follow', group: await ctx.loadGroup('raced'), userId: dee.userId, handle: dee.handle }, { actor: dee.userId, now: clock.now() });
    await runner.waitFor(requested.positions, 5000);
    const waitedBefore = (await ctx.directory.pendingOf('raced')).map((p) => p.userId);
    // The configure route opens the group, and the policy lets dee in before the route lists the requests again.
    expect(await policy.waitFor((await open('raced')).positions, 5000)).toBe(true);
    await eventually(async () => expect(await standingOf('raced', dee.userId)).toEqual({ following: true, access: 'granted' }));
    expect((await grantPending(ctx, 'raced', waitedBefore)).granted).toEqual(['dee']);
    // Listed only now, nobody waits any more.
    expect((await grantPending(ctx, 'raced')).granted).toEqual([]);
  });

  it('lands after the opening, from someone the read models do not know yet: granted once they do', async () => {
    await insiders('newcomer');
    const before = await ctx.loadGroup('newcomer');
    expect(await policy.waitFor((await open('newcomer')).positions, 5000)).toBe(true);
    // Eve signed up a moment ago: her account is in the log, not yet in the read models.
    await runner.pause();
    const eve = newId();
    await signUp(eve, 'eve');
    await ctx.memberships.handle(membershipStreamId('newcomer', eve), { type: 'Follow', group: before, userId: eve, handle: 'eve' }, { actor: eve, now: clock.now() });
    await new Promise((resolve) => setTimeout(resolve, 200));
    runner.resume();
    await eventually(async () => expect(await standingOf('newcomer', eve)).toEqual({ following: true, access: 'granted' }));
  });

  it('is not held up by a record that is not an event', async () => {
    await insiders('junk');
    const fay = await person('fay');
    await ctx.memberships.handle(membershipStreamId('junk', fay.userId), { type: 'Follow', group: await ctx.loadGroup('junk'), userId: fay.userId, handle: fay.handle }, { actor: fay.userId, now: clock.now() });
    const [junk] = await log.append(GROUPS_TOPIC, [{ key: groupStreamId('junk'), value: 'not json {' }]);
    expect(await policy.waitFor([junk!], 5000)).toBe(true);
    await open('junk');
    await eventually(async () => expect(await standingOf('junk', fay.userId)).toEqual({ following: true, access: 'granted' }));
  });

  it("the operator's opening does not count as let in someone who followed again on their own", async () => {
    await insiders('self');
    const gus = await person('gus');
    const requested = await ctx.memberships.handle(membershipStreamId('self', gus.userId), { type: 'Follow', group: await ctx.loadGroup('self'), userId: gus.userId, handle: gus.handle }, { actor: gus.userId, now: clock.now() });
    await runner.waitFor(requested.positions, 5000);
    const waitedBefore = (await ctx.directory.pendingOf('self')).map((p) => p.userId);
    // The policy is held, so that only gus lets himself in: following again, once the group is open.
    await policy.stop();
    try {
      await open('self');
      await ctx.memberships.handle(membershipStreamId('self', gus.userId), { type: 'Follow', group: await ctx.loadGroup('self'), userId: gus.userId, handle: gus.handle }, { actor: gus.userId, now: clock.now() });
      expect(await standingOf('self', gus.userId)).toEqual({ following: true, access: null });
      expect((await grantPending(ctx, 'self', waitedBefore)).granted).toEqual([]);
    } finally {
      policy = await startOpenGroupPolicy({ log, ctx });
    }
  });

  it('in a group that requires approval again, waits for an approval', async () => {
    await insiders('again');
    const cy = await person('cy');
    const before = await ctx.loadGroup('again');
    await open('again');
    await ctx.groups.handle(groupStreamId('again'), { type: 'ConfigureGroup', requiresApproval: true }, ctx.meta('admin'));
    const requested = await ctx.memberships.handle(membershipStreamId('again', cy.userId), { type: 'Follow', group: before, userId: cy.userId, handle: cy.handle }, { actor: cy.userId, now: clock.now() });
    expect(await policy.waitFor(requested.positions, 5000)).toBe(true);
    expect(await standingOf('again', cy.userId)).toEqual({ following: false, access: 'pending' });
  });
});
