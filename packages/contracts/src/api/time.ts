/**
 * The API's date and time formats, in the service's time zone: dates YYYY-MM-DD, times
 * HH:MM:SS.mmmmmm (microseconds; JS keeps milliseconds, so the last three digits are 0),
 * short times HH:MM.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

function parts(instant: Date | string, timeZone: string): Record<string, string> {
  if (timeZone === 'UTC') return utcParts(instant);
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
    formatters.set(timeZone, f);
  }
  const date = typeof instant === 'string' ? new Date(instant) : instant;
  const out: Record<string, string> = {};
  for (const p of f.formatToParts(date)) out[p.type] = p.value;
  out.ms = String(date.getUTCMilliseconds()).padStart(3, '0');
  return out;
}

/**
 * The same parts in UTC (the default zone), read off the ISO text: Intl's formatToParts costs
 * about 6 µs a call, and a page of 100 notifications asks it 200 times.
 */
function utcParts(instant: Date | string): Record<string, string> {
  const iso = (typeof instant === 'string' ? new Date(instant) : instant).toISOString();
  // YYYY-MM-DDTHH:MM:SS.mmmZ; years beyond 9999 or before 0 carry a sign and six digits.
  const at = iso.length - 24;
  return { year: iso.slice(0, at + 4), month: iso.slice(at + 5, at + 7), day: iso.slice(at + 8, at + 10), hour: iso.slice(at + 11, at + 13), minute: iso.slice(at + 14, at + 16), second: iso.slice(at + 17, at + 19), ms: iso.slice(at + 20, at + 23) };
}

export const apiDate = (instant: Date | string, timeZone = 'UTC'): string => {
  const p = parts(instant, timeZone);
  return `${p.year}-${p.month}-${p.day}`;
};

export const apiTime = (instant: Date | string, timeZone = 'UTC'): string => {
  const p = parts(instant, timeZone);
  return `${p.hour}:${p.minute}:${p.second}.${p.ms}000`;
};

export const apiTimeSeconds = (instant: Date | string, timeZone = 'UTC'): string => {
  const p = parts(instant, timeZone);
  return `${p.hour}:${p.minute}:${p.second}`;
};

export const apiTimeShort = (instant: Date | string, timeZone = 'UTC'): string => {
  const p = parts(instant, timeZone);
  return `${p.hour}:${p.minute}`;
};

/**
 * The instant at which a local date and time (HH:MM) occurs in a time zone, or null when they do
 * not name a real moment: no such date, or a time the zone's clocks skip (daylight saving starts).
 * The zone's offset is taken where the answer lies, not where the first guess did: on the day
 * clocks move, the two differ for the hours between them. A time that occurs twice (clocks go
 * back) is its first occurrence.
 */
export function instantOf(date: string, time: string, timeZone = 'UTC'): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  const t = /^(\d{1,2}):(\d{2})$/.exec(time);
  if (!m || !t) return null;
  const [y, mo, d, h, mi] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(t[1]), Number(t[2])];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59) return null;
  const wanted = Date.UTC(y, mo - 1, d, h, mi);
  const probe = new Date(wanted);
  if (probe.getUTCMonth() !== mo - 1 || probe.getUTCDate() !== d) return null;
  /** The local date and time at an instant, read as if it were UTC. */
  const localAt = (instant: number): number => {
    const local = parts(new Date(instant), timeZone);
    return Date.UTC(Number(local.year), Number(local.month) - 1, Number(local.day), Number(local.hour), Number(local.minute));
  };
  // Each offset the zone uses around that day gives a candidate (a day before and after covers
  // both sides of a change, east or west of UTC); the earliest that reads back as wanted wins.
  let found: number | null = null;
  for (const at of [wanted - DAY_MS, wanted, wanted + DAY_MS]) {
    const candidate = wanted - (localAt(at) - at);
    if ((found === null || candidate < found) && localAt(candidate) === wanted) found = candidate;
  }
  return found === null ? null : new Date(found);
}

const DAY_MS = 24 * 60 * 60 * 1000;
