import type { LogPosition } from '../ports/event-log.ts';

/** Positions travel in headers as `topic:partition:offset,…`; topic names contain no `:` or `,`. */
export function formatPositions(positions: readonly LogPosition[]): string {
  return positions.map((p) => `${p.topic}:${p.partition}:${p.offset}`).join(',');
}

export function parsePositions(header: string | string[] | undefined): LogPosition[] {
  // Most requests carry none (nothing written lately): no split, no regular expression.
  if (header === undefined || header === '') return [];
  const raw = Array.isArray(header) ? header.join(',') : (header ?? '');
  const out: LogPosition[] = [];
  for (const part of raw.split(',')) {
    const m = /^([A-Za-z0-9._-]+):(\d+):(\d+)$/.exec(part.trim());
    if (m) out.push({ topic: m[1]!, partition: Number(m[2]), offset: Number(m[3]) });
  }
  return out;
}

/** Keeps the highest offset per topic and partition. */
export function mergePositions(a: readonly LogPosition[], b: readonly LogPosition[]): LogPosition[] {
  const byKey = new Map<string, LogPosition>();
  for (const p of [...a, ...b]) {
    const key = `${p.topic}:${p.partition}`;
    const seen = byKey.get(key);
    if (!seen || seen.offset < p.offset) byKey.set(key, p);
  }
  return [...byKey.values()];
}
