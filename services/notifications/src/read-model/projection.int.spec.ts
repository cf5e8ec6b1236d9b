import type { CastieEvent, EventEnvelope } from '@castie/contracts';
import type { LogRecord } from '@castie/platform';
import { openSqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import { describe, expect, it } from 'vitest';
import { ACTIVITY, notificationsProjection } from './projection.ts';

// A Castie's creation and a comment on it live in different streams, which Kafka may put in
// different partitions: the comment may be read first. Frodads' activity is read by group (the
// groups the reader follows), so the comment must learn its group either way.
const hex = (c: string) => c.repeat(32);
const castieId = hex('a');
const [ann, bob] = [hex('1'), hex('2')];
const commentId = hex('c');
const at = (m: number) => new Date(Date.UTC(2026, 2, 1, 12, m)).toISOString();

const events: { streamId: string; event: CastieEvent }[] = [
  {
    streamId: `castie-${castieId}`,
    event: {
      type: 'CastieCreated',
      data: { castieId, groupSlug: 'g', creatorId: ann, question: 'Rain?', showUsername: true, allowWriteIn: false, options: [{ answerId: 1, text: 'Yes' }], endsAt: null, endDate: null, endTime: null, createdAt: at(0) },
    },
  },
  { streamId: `forecast-${castieId}-${bob}`, event: { type: 'ForecastPlaced', data: { castieId, groupSlug: 'g', userId: bob, forecastId: 11, answerId: 1, text: 'Yes', placedAt: at(1) } } },
  { streamId: `comment-${commentId}`, event: { type: 'CommentPosted', data: { commentId, castieId, userId: bob, text: 'cloudy', postedAt: at(2) } } },
];

async function activityAfter(order: number[]) {
  const store = openSqliteDocumentStore({ path: ':memory:' });
  const projection = notificationsProjection();
  const partitions = new Map<string, number>();
  for (const i of order) {
    const { streamId, event } = events[i]!;
    const partition = partitions.get(streamId) ?? partitions.set(streamId, partitions.size).get(streamId)!;
    const envelope: EventEnvelope = { id: `e${i}`, type: event.type, schemaVersion: 1, streamId, streamVersion: 1, occurredAt: at(i), actor: bob, data: event.data };
    const record: LogRecord = { topic: 'casties', partition, offset: 0, key: streamId, value: JSON.stringify(envelope), timestamp: 0 };
    await store.transaction((unit) => projection.apply(event, envelope, record, unit));
  }
  const activity = store.collection(ACTIVITY);
  const docs = (await activity.find({})).map(({ _id, kind, groupSlug }) => ({ _id, kind, groupSlug }));
  const inGroup = (await activity.find({ actorId: { $in: [bob] }, groupSlug: { $in: ['g'] } })).map((d) => d._id).sort();
  return { docs: docs.sort((a, b) => (a._id < b._id ? -1 : 1)), inGroup, plan: store.explain(ACTIVITY, { actorId: { $in: [bob, ann] }, at: { $gte: at(0), $lte: at(9) }, groupSlug: { $in: ['g', 'h'] } }) };
}

describe('notifications projection: activity', () => {
  it('knows the group of a comment whether its Castie was created before or after it was read', async () => {
    const inOrder = await activityAfter([0, 1, 2]);
    expect(inOrder.docs).toEqual([
      { _id: `comment:${commentId}`, kind: 'comment', groupSlug: 'g' },
      { _id: 'e1', kind: 'forecast', groupSlug: 'g' },
    ]);
    expect(inOrder.inGroup).toEqual([`comment:${commentId}`, 'e1']);
    for (const order of [
      [2, 1, 0],
      [1, 2, 0],
      [2, 0, 1],
    ]) {
      const other = await activityAfter(order);
      expect(other.docs).toEqual(inOrder.docs);
      expect(other.inGroup).toEqual(inOrder.inGroup);
    }
  });

  it("reads frodads' activity in followed groups from one index, without sorting", async () => {
    const { plan } = await activityAfter([0, 1, 2]);
    expect(plan.join('\n')).toMatch(/USING INDEX notification_activity\$actorId,at-,groupSlug/);
    expect(plan.join('\n')).not.toContain('TEMP B-TREE');
  });
});
