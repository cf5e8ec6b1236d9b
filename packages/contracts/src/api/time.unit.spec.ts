import { describe, expect, it } from 'vitest';
import { apiDate, apiTime, apiTimeSeconds, apiTimeShort, instantOf } from './time.ts';

/** What Intl says an instant is in a zone: the reference the UTC fast path must agree with. */
function intl(instant: Date, timeZone: string) {
  const f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
  const p = Object.fromEntries(f.formatToParts(instant).map((x) => [x.type, x.value]));
  return { date: `${p.year}-${p.month}-${p.day}`, seconds: `${p.hour}:${p.minute}:${p.second}` };
}

describe('API dates and times', () => {
  it('formats UTC as Intl does, at every kind of instant', () => {
    const instants = [
      '2026-03-01T12:34:56.789Z',
      '2026-12-31T23:59:59.999Z',
      '2027-01-01T00:00:00.000Z',
      '2024-02-29T06:07:08.009Z',
      '1970-01-01T00:00:00.000Z',
      '1999-12-31T23:59:59.000Z',
    ].map((s) => new Date(s));
    for (let i = 0; i < 500; i++) instants.push(new Date(Date.UTC(2000, 0, 1) + i * 7_919_003_117));
    for (const instant of instants) {
      const expected = intl(instant, 'UTC');
      expect(apiDate(instant)).toBe(expected.date);
      expect(apiDate(instant.toISOString(), 'UTC')).toBe(expected.date);
      expect(apiTimeSeconds(instant)).toBe(expected.seconds);
      expect(apiTimeShort(instant)).toBe(expected.seconds.slice(0, 5));
      expect(apiTime(instant)).toBe(`${expected.seconds}.${String(instant.getUTCMilliseconds()).padStart(3, '0')}000`);
    }
  });

  it('formats other zones in their local time, across daylight saving', () => {
    // New York: 01:59 EST, then 03:00 EDT a minute later (2026-03-08).
    expect(apiTimeSeconds('2026-03-08T06:59:00.000Z', 'America/New_York')).toBe('01:59:00');
    expect(apiTimeSeconds('2026-03-08T07:00:00.000Z', 'America/New_York')).toBe('03:00:00');
    expect(apiDate('2026-03-01T03:00:00.000Z', 'America/New_York')).toBe('2026-02-28');
    expect(apiTimeShort('2026-03-01T12:00:00.000Z', 'Asia/Kathmandu')).toBe('17:45');
  });

  it('takes the first occurrence of a repeated time east of UTC too, and agrees with a search of every offset on the days clocks move', () => {
    const at = (date: string, time: string, zone: string) => instantOf(date, time, zone)?.toISOString() ?? null;
    // Paris goes back from 03:00 CEST to 02:00 CET: 02:30 happens at 00:30Z, then at 01:30Z.
    expect(at('2026-10-25', '02:30', 'Europe/Paris')).toBe('2026-10-25T00:30:00.000Z');
    expect(at('2026-04-05', '02:30', 'Australia/Sydney')).toBe('2026-04-04T15:30:00.000Z');
    expect(at('2026-03-29', '02:30', 'Europe/Paris')).toBeNull();
    /** The earliest instant, over every offset a zone may have (quarter hours, -14 h to +14 h), whose local time is wanted. */
    const searched = (date: string, time: string, zone: string): string | null => {
      const wanted = `${date} ${time}`;
      let found: number | null = null;
      for (let offset = -14 * 60; offset <= 14 * 60; offset += 15) {
        const candidate = Date.parse(`${date}T${time}:00.000Z`) - offset * 60_000;
        if ((found === null || candidate < found) && `${apiDate(new Date(candidate), zone)} ${apiTimeShort(new Date(candidate), zone)}` === wanted) found = candidate;
      }
      return found === null ? null : new Date(found).toISOString();
    };
    const changes: [string, string[]][] = [
      ['Europe/Paris', ['2026-03-29', '2026-10-25']],
      ['Australia/Sydney', ['2026-04-05', '2026-10-04']],
      ['America/New_York', ['2026-03-08', '2026-11-01']],
      // Half an hour at a time.
      ['Australia/Lord_Howe', ['2026-04-05', '2026-10-04']],
    ];
    for (const [zone, days] of changes) {
      for (const day of days) {
        for (let minute = 0; minute < 24 * 60; minute += 15) {
          const time = `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
          expect(at(day, time, zone), `${zone} ${day} ${time}`).toBe(searched(day, time, zone));
        }
      }
    }
  });

  it('finds the instant of a local date and time where the zone\'s offset applies, on the days clocks move too', () => {
    const at = (date: string, time: string, zone: string) => instantOf(date, time, zone)?.toISOString() ?? null;
    expect(at('2026-03-01', '12:00', 'UTC')).toBe('2026-03-01T12:00:00.000Z');
    expect(at('2026-03-07', '23:30', 'America/New_York')).toBe('2026-03-08T04:30:00.000Z');
    // Clocks go from 02:00 to 03:00: 03:30 is daylight time, 02:30 never happens.
    expect(at('2026-03-08', '03:30', 'America/New_York')).toBe('2026-03-08T07:30:00.000Z');
    expect(at('2026-03-08', '01:30', 'America/New_York')).toBe('2026-03-08T06:30:00.000Z');
    expect(at('2026-03-08', '02:30', 'America/New_York')).toBeNull();
    // Clocks go from 02:00 back to 01:00: 01:30 happens twice, the first time is meant.
    expect(at('2026-11-01', '01:30', 'America/New_York')).toBe('2026-11-01T05:30:00.000Z');
    expect(at('2026-11-01', '03:00', 'America/New_York')).toBe('2026-11-01T08:00:00.000Z');
    expect(at('2026-04-05', '12:00', 'Australia/Sydney')).toBe('2026-04-05T02:00:00.000Z');
    expect(at('2026-06-01', '05:45', 'Asia/Kathmandu')).toBe('2026-06-01T00:00:00.000Z');
    expect(at('2026-02-30', '12:00', 'UTC')).toBeNull();
    // Every minute of a day clocks move, in both directions, reads back as itself.
    for (const day of ['2026-03-08', '2026-11-01']) {
      for (let minute = 0; minute < 24 * 60; minute += 7) {
        const time = `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
        const found = instantOf(day, time, 'America/New_York');
        if (found) expect(`${apiDate(found, 'America/New_York')} ${apiTimeShort(found, 'America/New_York')}`).toBe(`${day} ${time}`);
        else expect(day === '2026-03-08' && time >= '02:00' && time < '03:00', time).toBe(true);
      }
    }
  });
});
