/** Plain-text output for people: aligned columns, and key/value blocks for one record. */

export type Cell = string | number | boolean | null | undefined | readonly string[];

const show = (value: Cell): string => {
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.join(', ');
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return String(value as string | number);
};

/** Columns padded to their widest cell; a header line; `empty` when there are no rows. */
export function table(rows: readonly Record<string, Cell>[], columns: readonly { key: string; title: string }[], empty: string): string {
  if (rows.length === 0) return `${empty}\n`;
  const cells = rows.map((row) => columns.map((c) => show(row[c.key]).replace(/\s+/g, ' ')));
  const widths = columns.map((c, i) => Math.max(c.title.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: readonly string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(columns.map((c) => c.title.toUpperCase())), ...cells.map(line)].join('\n') + '\n';
}

/** One record as `key: value` lines, keys aligned. */
export function record(fields: readonly [string, Cell][]): string {
  const width = Math.max(...fields.map(([k]) => k.length));
  return fields.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${show(v)}`).join('\n') + '\n';
}
