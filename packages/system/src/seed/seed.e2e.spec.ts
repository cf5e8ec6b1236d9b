import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedEventStores } from '../embedded.ts';
import { TestSystem } from '../testing/harness.ts';
import { SEED_PASSWORD, seedHistory, type SeedOptions, type SeedSummary } from './seed-history.ts';

// A small seeded history, then the whole embedded system started on it: what a user notices.
const NOW = new Date('2026-03-01T12:00:00Z');
const asked = { users: 60, groups: 6, casties: 150, forecasts: 1500, friends: 5, hubFriends: 20, seed: 7, now: NOW } satisfies SeedOptions;
const hub = { email: 'seed0@example.com', password: SEED_PASSWORD };

/** Seeds into a data dir with the embedded profile's own log and stores, then closes them. */
async function seed(dataDir: string, options: SeedOptions): Promise<SeedSummary> {
  const events = await openEmbeddedEventStores(dataDir);
  try {
    return await seedHistory(events, options);
  } finally {
    await events.close();
  }
}

interface ListedCastie {
  uuid: string;
  allowWriteIn: boolean;
  answerSubmitted: boolean;
}

describe('npm run seed: a history written through the write side', () => {
  let summary: SeedSummary;
  let sys: TestSystem;

  beforeAll(async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'castie-seed-'));
    summary = await seed(dataDir, asked);
    sys = await TestSystem.start({ dataDir, now: NOW });
  }, 60_000);
  afterAll(() => sys?.close());
  const get = (url: string, user = hub) => sys.request('GET', url, { user });

  it('writes exactly the counts asked for', () => {
    expect(summary).toMatchObject({ users: 60, groups: 6, casties: 150, forecasts: 1500, frodads: 150, comments: 300, notes: [] });
    expect(summary.hub).toMatchObject({ handle: 'seed0', email: 'seed0@example.com', frodads: 20 });
    expect(summary.answered).toBeGreaterThan(0);
    expect(Object.values(summary.eventsByTopic).reduce((a, b) => a + b, 0)).toBe(summary.events);
  });

  it('lets the hub sign in with the shared password and shows its 20 frodads', async () => {
    const res = await get('/api/profile/seed0/frodads/');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.myFrodads as object)).toHaveLength(20);
    expect((await get('/api/profile/seed0/frodads/', { ...hub, password: 'wrong' })).status).toBe(401);
  });

  it('fills the hub\'s following feed and the leaderboard', async () => {
    const home = await get('/api/home/following/?limit=500');
    expect(home.status).toBe(200);
    expect(Object.keys(home.body.casties as object).length).toBeGreaterThan(10);

    // Overall: ranked by XP, shown as levels; the leaders have earned some.
    const board = await get('/api/leaderboard/');
    expect(board.status).toBe(200);
    const profiles = board.body.leaderboard_profiles as { handle: string; level?: number; xp?: number }[];
    expect(profiles.length).toBeGreaterThan(5);
    expect(profiles[0]!.level).toBeGreaterThan(1);
    // Per group: XP itself.
    const groups = board.body.leaderboard_groups as { slug: string }[];
    expect(groups.length).toBeGreaterThan(0);
    const groupBoard = await get(`/api/leaderboard/${groups[0]!.slug}/`);
    expect((groupBoard.body.leaderboard_profiles as { xp?: number }[])[0]!.xp).toBeGreaterThan(0);
  });

  it('shows an answered Castie with its correct option', async () => {
    const home = await get('/api/home/following/?limit=500');
    const answered = Object.values(home.body.casties as Record<string, ListedCastie>).find((c) => c.answerSubmitted && !c.allowWriteIn);
    expect(answered).toBeDefined();
    const detail = await get(`/api/casties/${answered!.uuid}/`);
    expect(detail.status).toBe(200);
    const castie = detail.body.castie as { answerSubmitted: boolean; correctIndex: string; forecasts: { answer_text: string; is_correct?: true }[] };
    expect(castie.answerSubmitted).toBe(true);
    const correct = castie.forecasts.filter((f) => f.is_correct);
    expect(correct).toHaveLength(1);
    expect(castie.correctIndex).toBe(correct[0]!.answer_text);
  });
});

describe('seeding a data dir that already has a history', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  const tiny = { users: 4, groups: 1, casties: 3, forecasts: 4, friends: 1, hubFriends: 2, now: NOW } satisfies SeedOptions;

  it('is refused without append, and with append numbers people after the earlier ones', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'castie-seed-'));
    dirs.push(dataDir);
    await seed(dataDir, tiny);
    await expect(seed(dataDir, tiny)).rejects.toThrow(/already holds \d+ events.*--append/);
    const again = await seed(dataDir, { ...tiny, append: true });
    expect(again.handles).toEqual(['seed4', 'seed7']);
    expect(again.users).toBe(4);
  });

  it('runs as a process (what npm run seed starts), prints its summary and ends by itself', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'castie-seed-'));
    dirs.push(dataDir);
    const cli = fileURLToPath(new URL('./cli.ts', import.meta.url));
    const args = ['--data-dir', dataDir, '--users', '8', '--groups', '2', '--casties', '6', '--forecasts', '12', '--friends', '2'];
    const child = spawn(process.execPath, ['--import', 'tsx', cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    // A seed that wrote everything and then hangs is what this looks for: still running after
    // 40 s, it is killed, and the test fails on its exit.
    const killer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
    clearTimeout(killer);
    expect(code, err).toBe(0);
    expect(out).toMatch(/forecasts\s+12\b/);
  }, 60_000);
});
