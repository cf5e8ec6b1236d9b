// What every benchmark takes from its command line and how it prints its side-by-side table.
import { resolve } from 'node:path';

export interface BenchArgs {
  /** The value after `--name`, or the fallback. */
  flag(name: string, fallback: string): string;
  /** True when `--name` was given. */
  has(name: string): boolean;
  /** `--compare <checkout>`: another checkout to measure side by side, or null. */
  compare: string | null;
}

export function benchArgs(argv: readonly string[] = process.argv.slice(2)): BenchArgs {
  const flag = (name: string, fallback: string): string => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : fallback;
  };
  const has = (name: string) => argv.includes(`--${name}`);
  return { flag, has, compare: has('compare') ? resolve(flag('compare', '')) : null };
}

/** Rows of figures, one column per measured checkout, labels cut to the column. */
export function printTable<R extends { label: string }>(runs: readonly R[], rows: readonly [string, (run: R) => string][], column = 24): void {
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  const head = (label: string) => (label.length > column - 2 ? `${label.slice(0, column - 5)}...` : label).padStart(column);
  process.stdout.write(`${''.padEnd(width)}${runs.map((r) => head(r.label)).join('')}\n`);
  for (const [name, value] of rows) process.stdout.write(`${name.padEnd(width)}${runs.map((r) => value(r).padStart(column)).join('')}\n`);
}
