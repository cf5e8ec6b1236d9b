/**
 * The API's date and time formats, in the service's time zone: dates YYYY-MM-DD, times
 * HH:MM:SS.mmmmmm (microseconds; JS keeps milliseconds, so the last three digits are 0),
 * short times HH:MM.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

function parts(instant: Date | string, timeZone: string): Record<string, string> {
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
 * not name a real moment. Handles DST by correcting with the zone's offset at that moment.
 */
export function instantOf(date: string, time: string, timeZone = 'UTC'): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  const t = /^(\d{1,2}):(\d{2})$/.exec(time);
  if (!m || !t) return null;
  const [y, mo, d, h, mi] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(t[1]), Number(t[2])];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59) return null;
  const guess = Date.UTC(y, mo - 1, d, h, mi);
  const probe = new Date(guess);
  if (probe.getUTCMonth() !== mo - 1 || probe.getUTCDate() !== d) return null;
  const local = parts(probe, timeZone);
  const asUtc = Date.UTC(Number(local.year), Number(local.month) - 1, Number(local.day), Number(local.hour), Number(local.minute));
  return new Date(guess - (asUtc - guess));
}
