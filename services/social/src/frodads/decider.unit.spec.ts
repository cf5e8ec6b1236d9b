import type { SocialEvent } from '@castie/contracts';
import { deciderSpec } from '@castie/platform/testing';
import { describe, expect, it } from 'vitest';
import { friendshipDecider, frodadsStreamId } from './decider.ts';

// The spec's Friendship table, row by row, seen from `me`; `you` is the other user.
const me = 'a'.repeat(32);
const you = 'b'.repeat(32);
const spec = deciderSpec(friendshipDecider);

const iAsked: SocialEvent = { type: 'FrodadRequested', data: { fromId: me, toId: you } };
const youAsked: SocialEvent = { type: 'FrodadRequested', data: { fromId: you, toId: me } };
const iAccepted: SocialEvent = { type: 'FrodadRequestAccepted', data: { fromId: you, toId: me } };
const youAccepted: SocialEvent = { type: 'FrodadRequestAccepted', data: { fromId: me, toId: you } };
const iRejected: SocialEvent = { type: 'FrodadRequestRejected', data: { fromId: you, toId: me } };
const youRejected: SocialEvent = { type: 'FrodadRequestRejected', data: { fromId: me, toId: you } };
const friends = [iAsked, youAccepted];

const add = { type: 'RequestFrodad' as const, fromId: me, toId: you };
const accept = { type: 'RespondToRequest' as const, byId: me, fromId: you, fromHandle: 'you', accept: true };
const reject = { ...accept, accept: false };
const unfrodad = { type: 'RemoveFrodad' as const, byId: me, otherId: you, otherHandle: 'you' };

describe('friendship decider: the spec table', () => {
  it('not-friends, add-frodad to another user: a request is sent (pending for me, respond for you)', () => spec.given([]).when(add).then([iAsked]));

  it('pending, add-frodad again: cannot_add_frodad, request already pending', () => spec.given([iAsked]).when(add).thenFails('cannot_add_frodad', /^friend request is already pending$/));

  it('friends, add-frodad: cannot_add_frodad, already friends (whoever asked first)', () => {
    spec.given(friends).when(add).thenFails('cannot_add_frodad', /^these Users are already friends$/);
    spec.given([youAsked, iAccepted]).when(add).thenFails('cannot_add_frodad', /^these Users are already friends$/);
  });

  it('any state, add-frodad to oneself: cannot_add_frodad', () => {
    for (const given of [[], [iAsked], friends]) spec.given(given).when({ type: 'RequestFrodad', fromId: me, toId: me }).thenFails('cannot_add_frodad', /^cannot frodad request yourself$/);
  });

  it('respond, accept: both become friends', () => spec.given([youAsked]).when(accept).then([iAccepted]));

  it('respond, reject: the request is rejected', () => spec.given([youAsked]).when(reject).then([iRejected]));

  it('friends, unfrodad: not friends any more, from either side', () => {
    spec.given(friends).when(unfrodad).then([{ type: 'FrodadRemoved', data: { byId: me, otherId: you } }]);
    spec.given(friends).when({ type: 'RemoveFrodad', byId: you, otherId: me, otherHandle: 'me' }).then([{ type: 'FrodadRemoved', data: { byId: you, otherId: me } }]);
  });
});

describe('friendship decider: requests that cross', () => {
  it('add-frodad while the other side already asked me accepts their request: we are friends', () => spec.given([youAsked]).when(add).then([iAccepted]));

  it('the state after a crossing request is friends for both', () => {
    const state = spec.given([youAsked, iAccepted]).state;
    expect(state).toEqual({ status: 'friends', users: [me, you] });
  });
});

describe('friendship decider: improper responses', () => {
  it('accept or reject with no request at all', () => {
    spec.given([]).when(accept).thenFails('improper_frodad_response', /^there is no pending frodad request from you$/);
    spec.given([]).when(reject).thenFails('improper_frodad_response');
  });

  it('accept my own request', () => spec.given([iAsked]).when(accept).thenFails('improper_frodad_response', /your own request to you is waiting/));

  it('accept when already friends', () => spec.given(friends).when(accept).thenFails('improper_frodad_response', /already frodads/));

  it('accept or reject a request that was already rejected', () => {
    spec.given([youAsked, iRejected]).when(accept).thenFails('improper_frodad_response');
    spec.given([youAsked, iRejected]).when(reject).thenFails('improper_frodad_response');
  });

  it('unfrodad someone who is not a frodad (no relation, pending either way, after removal)', () => {
    for (const given of [[], [iAsked], [youAsked], [...friends, { type: 'FrodadRemoved' as const, data: { byId: you, otherId: me } }]]) {
      spec.given(given).when(unfrodad).thenFails('improper_frodad_response', /^you and you are not frodads$/);
    }
  });
});

describe('friendship decider: starting over', () => {
  it('a rejected request can be sent again, by either side', () => {
    spec.given([youAsked, iRejected]).when(add).then([iAsked]);
    spec.given([iAsked, youRejected]).when(add).then([iAsked]);
  });

  it('after an unfrodad, a new request starts from not-friends', () =>
    spec.given([...friends, { type: 'FrodadRemoved', data: { byId: you, otherId: me } }]).when(add).then([iAsked]));
});

describe('the pair stream', () => {
  it('is the same stream from both sides', () => {
    expect(frodadsStreamId(me, you)).toBe(frodadsStreamId(you, me));
    expect(frodadsStreamId(you, me)).toBe(`frodads-${me}-${you}`);
  });
});
