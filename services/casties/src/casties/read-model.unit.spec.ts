import type { CastieEvent } from '@castie/contracts';
import { describe, expect, it } from 'vitest';
import { viewChange } from './read-model.ts';

const castieId = 'c'.repeat(32);
const ada = 'a'.repeat(32);
const at = '2026-03-01T12:00:00.000Z';

/** One event of each kind that changes a view; each may be the first its view sees (events of one Castie travel in several streams). */
const changing: CastieEvent[] = [
  {
    type: 'CastieCreated',
    data: { castieId, groupSlug: 'sports', creatorId: ada, question: 'Who wins?', showUsername: true, allowWriteIn: true, options: [{ answerId: 7, text: 'Home' }], endsAt: null, endDate: null, endTime: null, createdAt: at },
  },
  { type: 'ForecastPlaced', data: { castieId, groupSlug: 'sports', userId: ada, forecastId: 1, answerId: 7, text: 'Home', placedAt: at } },
  { type: 'ForecastPlaced', data: { castieId, groupSlug: 'sports', userId: ada, forecastId: 2, answerId: null, text: ' Draw ', placedAt: at } },
  { type: 'CastieAnswered', data: { castieId, groupSlug: 'sports', correctAnswerId: 7, correctText: 'Home', answeredAt: at, scores: [] } },
  { type: 'CastieReported', data: { castieId, reporterId: ada } },
];

/** The top-level fields an update's operators other than $setOnInsert write. */
function written(update: Record<string, Record<string, unknown> | undefined>): string[] {
  return Object.entries(update)
    .filter(([op]) => op !== '$setOnInsert')
    .flatMap(([, fields]) => Object.keys(fields ?? {}).map((path) => path.split('.')[0]!));
}

describe('viewChange', () => {
  it('creates a whole view whichever event comes first, and never names a field twice (MongoDB refuses such an update)', () => {
    const fields = (e: CastieEvent) => {
      const update = viewChange(e)! as Record<string, Record<string, unknown> | undefined>;
      const seeded = Object.keys(update.$setOnInsert ?? {});
      const own = written(update);
      expect(seeded.filter((f) => own.includes(f)), e.type).toEqual([]);
      return new Set([...seeded, ...own]);
    };
    const whole = fields(changing[0]!);
    expect(whole.size).toBeGreaterThan(15);
    for (const e of changing.slice(1)) {
      // answeredAt is the one field a view has only once answered.
      const got = fields(e);
      got.delete('answeredAt');
      expect([...got].sort(), e.type).toEqual([...whole].sort());
    }
  });

  it('counts a forecast under its answer, and a write-in under its text, kept as first written', () => {
    const [, chosen, writeIn] = changing;
    expect(viewChange(chosen!)).toMatchObject({ $inc: { forecastsCount: 1, 'counts.7': 1 }, $max: { lastForecastAt: at, activityAt: at } });
    const update = viewChange(writeIn!)!;
    const [key] = Object.keys(update.$set ?? {});
    expect(key).toMatch(/^writeInTexts\.[0-9a-f]{16}$/);
    expect(update.$set).toEqual({ [key!]: 'Draw' });
    expect(update.$inc).toEqual({ forecastsCount: 1, [`writeIns.${key!.slice('writeInTexts.'.length)}`]: 1 });
  });

  it('leaves the view alone for the events it does not show', () => {
    expect(viewChange({ type: 'CommentDeleted', data: { commentId: castieId, castieId, userId: ada } })).toBeNull();
  });
});
