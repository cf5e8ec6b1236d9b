/**
 * Test helper: reads a Prometheus text exposition the way a scraper does. `sample` sums the
 * samples of a name whose labels include the given ones (`undefined` when there is none), so a
 * test can ask for "the count of GET /api/preferences/ at the gateway" without naming every label.
 */
export function sample(exposition: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let total: number | undefined;
  for (const line of exposition.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = new Map<string, string>();
    for (const label of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) found.set(label[1]!, label[2]!);
    if (Object.entries(labels).every(([k, v]) => found.get(k) === v)) total = (total ?? 0) + Number(match[3]);
  }
  return total;
}

/** Every label set of a metric, e.g. to check that no raw URL became a label value. */
export function labelSets(exposition: string, name: string): Record<string, string>[] {
  const sets: Record<string, string>[] = [];
  for (const line of exposition.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} \S+$/.exec(line);
    if (!match || match[1] !== name) continue;
    sets.push(Object.fromEntries([...match[2]!.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!])));
  }
  return sets;
}
