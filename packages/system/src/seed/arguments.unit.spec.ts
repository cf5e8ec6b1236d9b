import { describe, expect, it } from 'vitest';
import { parseSeedArgs } from './arguments.ts';

describe('the seed command line', () => {
  it('reads the documented invocation, in both --name value and --name=value forms', () => {
    const args = parseSeedArgs(['--users', '10000', '--groups=200', '--casties', '20000', '--forecasts', '500000', '--friends', '30', '--data-dir', '/tmp/x', '--seed', '7', '--now', '2026-03-01T12:00:00Z', '--append']);
    expect(args).toEqual({
      kind: 'run',
      dataDir: '/tmp/x',
      json: false,
      options: { users: 10000, groups: 200, casties: 20000, forecasts: 500000, friends: 30, seed: 7, now: new Date('2026-03-01T12:00:00Z'), timeZone: 'UTC', append: true, concurrency: 1000 },
    });
  });

  it('has defaults for everything, the data dir ./data among them', () => {
    const args = parseSeedArgs([]);
    expect(args.kind === 'run' && args.dataDir).toBe('./data');
    expect(args.kind === 'run' && args.options.hubFriends).toBeUndefined();
  });

  it('explains a bad value in one line', () => {
    expect(parseSeedArgs(['--users', 'many'])).toEqual({ kind: 'error', message: '--users must be a whole number (got "many")' });
    expect(parseSeedArgs(['--users', '0'])).toEqual({ kind: 'error', message: '--users must be at least 1 (got "0")' });
    expect(parseSeedArgs(['--now', 'yesterday'])).toMatchObject({ kind: 'error', message: expect.stringMatching(/^--now must be an ISO 8601 instant/) });
    expect(parseSeedArgs(['--time-zone', 'Mars/Olympus'])).toMatchObject({ kind: 'error', message: expect.stringMatching(/^--time-zone must be an IANA time zone/) });
    expect(parseSeedArgs(['--users', '10', '--hub-friends', '10'])).toMatchObject({ kind: 'error', message: expect.stringMatching(/^--hub-friends must be less than --users/) });
  });

  it('refuses unknown options and options without their value', () => {
    expect(parseSeedArgs(['--user', '3'])).toEqual({ kind: 'error', message: 'unknown option --user (see --help)' });
    expect(parseSeedArgs(['--users', '--groups', '3'])).toEqual({ kind: 'error', message: '--users needs a value' });
    expect(parseSeedArgs(['10000'])).toMatchObject({ kind: 'error' });
  });

  it('answers --help', () => {
    expect(parseSeedArgs(['--users', '3', '--help'])).toEqual({ kind: 'help' });
  });
});
