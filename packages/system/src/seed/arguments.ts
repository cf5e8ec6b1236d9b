import { z } from 'zod';
import type { SeedOptions } from './seed-history.ts';

export const USAGE = `Writes a year of realistic Castie history into the embedded profile's data directory,
straight through the services' write side (their deciders and event stores).

usage: npm run seed -- [options]

  --users <n>          people, handles seed0, seed1, ... (default 1000)
  --groups <n>         groups, about 10% requiring approval (default 40)
  --casties <n>        Casties (default 2000)
  --forecasts <n>      forecasts in all, at most one per person and Castie (default 40000)
  --friends <n>        average frodads per person (default 20)
  --hub-friends <n>    frodads of seed0, the hub (default 300, at most users - 1)
  --comments <n>       comments in all (default 2 per Castie)
  --data-dir <dir>     the embedded profile's data directory (default ./data; events in <dir>/log)
  --seed <n>           PRNG seed: the same seed writes the same history, ids aside (default 42)
  --now <instant>      the history's "now", ISO 8601, e.g. 2026-03-01T12:00:00Z (default: the current time)
  --time-zone <tz>     time zone of closing dates, as the service's TZ_NAME (default UTC)
  --concurrency <n>    commands in flight at once (default 1000)
  --append             add to a log that already holds events (refused otherwise)
  --json               print the summary as JSON
  -h, --help           this text

Every account signs in with HTTP Basic seed<i>@example.com:seed-password.
Example: npm run seed -- --users 10000 --groups 200 --casties 20000 --forecasts 500000 --friends 30
`;

const whole = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

const ArgsSchema = z.strictObject({
  users: whole(1).default(1000),
  groups: whole(1).default(40),
  casties: whole(0).default(2000),
  forecasts: whole(0).default(40000),
  friends: z.string().regex(/^\d+(\.\d+)?$/, 'must be a number such as 30 or 12.5').transform(Number).default(20),
  'hub-friends': whole(0).optional(),
  comments: whole(0).optional(),
  'data-dir': z.string().min(1, 'must not be empty').default('./data'),
  seed: whole(0, 2 ** 32 - 1).default(42),
  now: z
    .string()
    .refine((s) => /^\d{4}-\d{2}-\d{2}/.test(s) && !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 instant such as 2026-03-01T12:00:00Z')
    .transform((s) => new Date(s))
    .optional(),
  'time-zone': z
    .string()
    .refine((tz) => {
      try {
        new Intl.DateTimeFormat('en', { timeZone: tz });
        return true;
      } catch {
        return false;
      }
    }, 'must be an IANA time zone such as UTC or Europe/Paris')
    .default('UTC'),
  concurrency: whole(1, 100_000).default(1000),
  append: z.literal(true).optional(),
  json: z.literal(true).optional(),
});

const FLAGS = new Set(['append', 'json']);

export type SeedArgs =
  | { kind: 'help' }
  | { kind: 'error'; message: string }
  | { kind: 'run'; options: SeedOptions; dataDir: string; json: boolean };

/** Parses the command line (`--name value` or `--name=value`); errors are one line each. */
export function parseSeedArgs(argv: readonly string[]): SeedArgs {
  const raw: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') return { kind: 'help' };
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!m) return { kind: 'error', message: `unexpected argument "${arg}": options look like --users 1000 (see --help)` };
    const name = m[1]!;
    if (!(name in ArgsSchema.shape)) return { kind: 'error', message: `unknown option --${name} (see --help)` };
    if (FLAGS.has(name)) {
      if (m[2] !== undefined) return { kind: 'error', message: `--${name} takes no value` };
      raw[name] = true;
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined || (m[2] === undefined && value.startsWith('--'))) return { kind: 'error', message: `--${name} needs a value` };
    raw[name] = value;
  }
  const parsed = ArgsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? '');
    return { kind: 'error', message: `--${name} ${issue.message} (got "${String(raw[name])}")` };
  }
  const a = parsed.data;
  if (a['hub-friends'] !== undefined && a['hub-friends'] >= a.users) return { kind: 'error', message: `--hub-friends must be less than --users (${a.users}): the hub can befriend everyone else at most` };
  return {
    kind: 'run',
    dataDir: a['data-dir'],
    json: a.json ?? false,
    options: {
      users: a.users,
      groups: a.groups,
      casties: a.casties,
      forecasts: a.forecasts,
      friends: a.friends,
      ...(a['hub-friends'] !== undefined ? { hubFriends: a['hub-friends'] } : {}),
      ...(a.comments !== undefined ? { comments: a.comments } : {}),
      seed: a.seed,
      ...(a.now ? { now: a.now } : {}),
      timeZone: a['time-zone'],
      append: a.append ?? false,
      concurrency: a.concurrency,
    },
  };
}
