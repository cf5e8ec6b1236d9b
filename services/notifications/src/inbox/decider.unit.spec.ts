import { deciderSpec } from '@castie/platform/testing';
import { describe, expect, it } from 'vitest';
import { inboxDecider } from './decider.ts';

const userId = 'c'.repeat(32);
const now = new Date('2026-03-01T12:00:00Z');
const spec = deciderSpec(inboxDecider);

describe('inbox decider', () => {
  it('records that the notifications were retrieved, at the command time', () =>
    spec.given([]).when({ type: 'RetrieveNotifications', userId, now }).then([{ type: 'NotificationsRetrieved', data: { userId, at: now.toISOString() } }]));
  it('records a sign-in with what the client last saw', () =>
    spec
      .given([])
      .when({ type: 'SignIn', userId, lastSeenDate: '2026-02-28', lastSeenTime: '09:00:00', now })
      .then([{ type: 'SignedIn', data: { userId, lastSeenDate: '2026-02-28', lastSeenTime: '09:00:00', at: now.toISOString() } }]));
  it('remembers the last retrieval', () => {
    const { state } = spec.given([{ type: 'NotificationsRetrieved', data: { userId, at: '2026-03-01T10:00:00.000Z' } }]);
    expect(state.lastRetrievedAt).toBe('2026-03-01T10:00:00.000Z');
  });
});
