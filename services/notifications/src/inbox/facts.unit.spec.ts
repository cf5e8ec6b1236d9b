import { describe, expect, it } from 'vitest';
import { inboxFacts } from './facts.ts';

const userId = 'c'.repeat(32);
const now = new Date('2026-03-01T12:00:00Z');

describe('inbox facts', () => {
  it('records that the notifications were retrieved, at the command time', () =>
    expect(inboxFacts({ type: 'RetrieveNotifications', userId, now })).toEqual([{ type: 'NotificationsRetrieved', data: { userId, at: now.toISOString() } }]));
  it('records a sign-in with what the client last saw', () =>
    expect(inboxFacts({ type: 'SignIn', userId, lastSeenDate: '2026-02-28', lastSeenTime: '09:00:00', now })).toEqual([
      { type: 'SignedIn', data: { userId, lastSeenDate: '2026-02-28', lastSeenTime: '09:00:00', at: now.toISOString() } },
    ]));
});
