import { api, ErrorBodySchema } from '@castie/contracts';
import { newUser, TestSystem, type TestResponse, type TestUser } from '../../testing/harness.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Frodad requests through the gateway, the whole embedded system. What the acting user sees right
// after their own write is read at once (session consistency); what the other user sees is read
// with vi.waitFor, because other users see changes eventually (rule 6).

let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
});
afterAll(() => sys.close());

const addFrodad = (user: TestUser, handle: string) => sys.post(`/api/add-frodad/${handle}/`, {}, user);
const respond = (user: TestUser, handle: string, action: string) => sys.post(`/api/frodad-requests/${handle}/${action}/`, {}, user);
const unfrodad = (user: TestUser, handle: string) => sys.post(`/api/unfrodad/${handle}/`, {}, user);
const requestsOf = async (user: TestUser) => api.social.frodadRequests.response.parse((await sys.get('/api/frodad-requests/', user)).body);
const profileOf = async (viewer: TestUser, handle: string) => api.social.profileFrodads.response.parse((await sys.get(`/api/profile/${handle}/frodads/`, viewer)).body);
const entry = (u: TestUser) => ({ handle: u.handle, firstName: u.firstName, lastName: u.lastName });
const eventually = (check: () => Promise<void>) => vi.waitFor(check, { timeout: 5000, interval: 10 });

function expectMessage(res: TestResponse, message: string) {
  expect(res.status).toBe(200);
  expect(api.social.addFrodad.response.parse(res.body)).toEqual({ status: 200, message });
}

function expectError(res: TestResponse, status: number, errorType: string, message?: string) {
  expect(res.status).toBe(status);
  expect(ErrorBodySchema.parse(res.body)).toMatchObject({ status, error_type: errorType, ...(message ? { error_message: message } : {}) });
}

/** Two users who are frodads: `a` asked, `b` accepted. */
async function frodads(a: TestUser, b: TestUser) {
  expectMessage(await addFrodad(a, b.handle), 'friend request sent');
  expectMessage(await respond(b, a.handle, 'accept'), `you and ${a.handle} are now frodads`);
}

describe('a frodad request, accepted', () => {
  it('shows as sent to the sender and as received by the target; after accept both are frodads and counted', async () => {
    const ada = await sys.signUp({ ...newUser('ada'), firstName: 'Ada', lastName: 'Lovelace' });
    const bob = await sys.signUp({ ...newUser('bob'), firstName: 'Bob', lastName: 'Babbage' });

    expectMessage(await addFrodad(ada, bob.handle), 'friend request sent');
    expect(await requestsOf(ada)).toEqual({ status: 200, number_received: 0, requests_received: null, number_sent: 1, requests_sent: [entry(bob)] });
    expect((await profileOf(ada, bob.handle)).profileInfo.friend_status).toBe('pending');
    await eventually(async () => expect(await requestsOf(bob)).toEqual({ status: 200, number_received: 1, requests_received: [entry(ada)], number_sent: 0, requests_sent: null }));
    expect((await profileOf(bob, ada.handle)).profileInfo.friend_status).toBe('respond');

    expectMessage(await respond(bob, ada.handle, 'accept'), `you and ${ada.handle} are now frodads`);
    // Bob's own write: his next requests already reflect it, no waiting.
    expect(await requestsOf(bob)).toEqual({ status: 200, number_received: 0, requests_received: null, number_sent: 0, requests_sent: null });
    const bobSeesAda = await profileOf(bob, ada.handle);
    expect(bobSeesAda.profileInfo).toMatchObject({ handle: ada.handle, friend_status: 'friend', frodadsNumber: 1 });
    expect(bobSeesAda.myFrodads).toEqual({ [bob.handle]: { handle: bob.handle, firstName: 'Bob', lastName: 'Babbage', profPic: '', friend_status: 'self', level: 1 } });
    expect((await profileOf(bob, bob.handle)).myFrodads).toEqual({ [ada.handle]: { handle: ada.handle, firstName: 'Ada', lastName: 'Lovelace', profPic: '', friend_status: 'friends', level: 1 } });

    await eventually(async () => {
      const adaSeesBob = await profileOf(ada, bob.handle);
      expect(adaSeesBob.profileInfo).toMatchObject({ friend_status: 'friend', frodadsNumber: 1 });
      expect(await requestsOf(ada)).toMatchObject({ number_sent: 0, requests_sent: null });
    });
  });

  it('finds the target whatever the case of the handle', async () => {
    const ada = await sys.signUp();
    const bob = await sys.signUp();
    expectMessage(await addFrodad(ada, bob.handle.toUpperCase()), 'friend request sent');
    expectMessage(await respond(bob, ada.handle.toUpperCase(), 'accept'), `you and ${ada.handle} are now frodads`);
  });
});

describe('session consistency (rule 6)', () => {
  it("right after accepting, the accepting user's requests and profile reflect it, without waiting", async () => {
    // Several pairs in a row: each read follows its write immediately; none may miss it.
    for (let i = 0; i < 5; i++) {
      const asker = await sys.signUp();
      const me = await sys.signUp();
      expectMessage(await addFrodad(asker, me.handle), 'friend request sent');
      await eventually(async () => expect((await requestsOf(me)).number_received).toBe(1));
      expectMessage(await respond(me, asker.handle, 'accept'), `you and ${asker.handle} are now frodads`);
      expect(await requestsOf(me)).toMatchObject({ number_received: 0, requests_received: null });
      const mine = await profileOf(me, me.handle);
      expect(mine.profileInfo.frodadsNumber).toBe(1);
      expect(Object.keys(mine.myFrodads)).toEqual([asker.handle]);
      expect((await profileOf(me, asker.handle)).profileInfo.friend_status).toBe('friend');
    }
  });

  it('right after sending, the sender sees the request as sent; right after unfrodad, the friend is gone', async () => {
    const ada = await sys.signUp();
    const bob = await sys.signUp();
    await frodads(ada, bob);
    expectMessage(await unfrodad(ada, bob.handle), `${bob.handle} has been unfriended`);
    expect((await profileOf(ada, ada.handle)).profileInfo.frodadsNumber).toBe(0);
    expect((await profileOf(ada, bob.handle)).profileInfo.friend_status).toBe('not-friends');
    expectMessage(await addFrodad(ada, bob.handle), 'friend request sent');
    expect((await requestsOf(ada)).requests_sent).toEqual([entry(bob)]);
  });
});

describe('a frodad request, rejected', () => {
  it('leaves both sides without the request and not friends; the sender may ask again', async () => {
    const ada = await sys.signUp();
    const bob = await sys.signUp();
    expectMessage(await addFrodad(ada, bob.handle), 'friend request sent');
    expectMessage(await respond(bob, ada.handle, 'reject'), `frodad request from ${ada.handle} has been rejected`);
    expect(await requestsOf(bob)).toMatchObject({ number_received: 0, requests_received: null });
    expect((await profileOf(bob, ada.handle)).profileInfo).toMatchObject({ friend_status: 'not-friends', frodadsNumber: 0 });
    await eventually(async () => expect(await requestsOf(ada)).toMatchObject({ number_sent: 0, requests_sent: null }));
    expectError(await respond(bob, ada.handle, 'accept'), 400, 'improper_frodad_response', `there is no pending frodad request from ${ada.handle}`);
    expectMessage(await addFrodad(ada, bob.handle), 'friend request sent');
  });
});

describe('unfrodad', () => {
  it('ends the friendship for both and lowers both counts; a second unfrodad is improper', async () => {
    const ada = await sys.signUp();
    const bob = await sys.signUp();
    await frodads(ada, bob);
    await eventually(async () => expect((await profileOf(ada, ada.handle)).profileInfo.frodadsNumber).toBe(1));
    expectMessage(await unfrodad(bob, ada.handle), `${ada.handle} has been unfriended`);
    expect((await profileOf(bob, bob.handle)).myFrodads).toEqual({});
    await eventually(async () => {
      const mine = await profileOf(ada, ada.handle);
      expect(mine.profileInfo.frodadsNumber).toBe(0);
      expect(mine.myFrodads).toEqual({});
    });
    expectError(await unfrodad(bob, ada.handle), 400, 'improper_frodad_response', `you and ${ada.handle} are not frodads`);
    expectError(await unfrodad(ada, bob.handle), 400, 'improper_frodad_response');
  });
});

describe('requests that cross', () => {
  it('asking someone who already asked you makes you frodads at once (README)', async () => {
    const ada = await sys.signUp();
    const bob = await sys.signUp();
    expectMessage(await addFrodad(ada, bob.handle), 'friend request sent');
    expectMessage(await addFrodad(bob, ada.handle), `you and ${ada.handle} are now frodads`);
    expect((await profileOf(bob, ada.handle)).profileInfo.friend_status).toBe('friend');
    expect(await requestsOf(bob)).toMatchObject({ number_received: 0, number_sent: 0 });
  });

  it('two requests sent at the same moment from both sides end as one friendship', async () => {
    for (let i = 0; i < 5; i++) {
      const ada = await sys.signUp();
      const bob = await sys.signUp();
      const [fromAda, fromBob] = await Promise.all([addFrodad(ada, bob.handle), addFrodad(bob, ada.handle)]);
      // One request went first; the other, decided again on the stream's new version, accepted it.
      const [first, second] = fromAda.body.message === 'friend request sent' ? [ada, bob] : [bob, ada];
      expectMessage(first === ada ? fromAda : fromBob, 'friend request sent');
      expectMessage(second === ada ? fromAda : fromBob, `you and ${first.handle} are now frodads`);
      expect((await profileOf(second, first.handle)).profileInfo.friend_status).toBe('friend');
      await eventually(async () => expect((await profileOf(first, second.handle)).profileInfo).toMatchObject({ friend_status: 'friend', frodadsNumber: 1 }));
    }
  });
});

describe('refusals', () => {
  it('cannot_add_frodad: oneself, a request already pending, already frodads', async () => {
    const ada = await sys.signUp();
    const bob = await sys.signUp();
    expectError(await addFrodad(ada, ada.handle), 400, 'cannot_add_frodad', 'cannot frodad request yourself');
    expectMessage(await addFrodad(ada, bob.handle), 'friend request sent');
    expectError(await addFrodad(ada, bob.handle), 400, 'cannot_add_frodad', 'friend request is already pending');
    expectMessage(await respond(bob, ada.handle, 'accept'), `you and ${ada.handle} are now frodads`);
    expectError(await addFrodad(bob, ada.handle), 400, 'cannot_add_frodad', 'these Users are already friends');
    expectError(await addFrodad(ada, bob.handle), 400, 'cannot_add_frodad', 'these Users are already friends');
  });

  it('improper_frodad_response: an action other than accept or reject, no such request, my own request', async () => {
    const ada = await sys.signUp();
    const bob = await sys.signUp();
    expectMessage(await addFrodad(ada, bob.handle), 'friend request sent');
    expectError(await respond(bob, ada.handle, 'maybe'), 400, 'improper_frodad_response', 'action must be accept or reject');
    expectError(await respond(ada, bob.handle, 'accept'), 400, 'improper_frodad_response', `your own request to ${bob.handle} is waiting for their answer`);
    const cyd = await sys.signUp();
    expectError(await respond(cyd, ada.handle, 'reject'), 400, 'improper_frodad_response', `there is no pending frodad request from ${ada.handle}`);
    // The refused answers changed nothing: the request still waits for bob.
    await eventually(async () => expect((await requestsOf(bob)).requests_received).toEqual([entry(ada)]));
  });

  it('404 object_not_found for an unknown handle, on every frodad endpoint', async () => {
    const ada = await sys.signUp();
    for (const res of [await addFrodad(ada, 'nobodyhere'), await respond(ada, 'nobodyhere', 'accept'), await unfrodad(ada, 'nobodyhere'), await sys.get('/api/profile/nobodyhere/frodads/', ada)]) {
      expectError(res, 404, 'object_not_found', 'the requested user could not be found');
    }
  });

  it('404 inactive_user for a deleted account, on every frodad endpoint', async () => {
    const ada = await sys.signUp();
    const gone = await sys.signUp();
    expect((await sys.post(`/api/profile/${gone.handle}/delete/`, {}, gone)).status).toBe(200);
    await eventually(async () => expectError(await addFrodad(ada, gone.handle), 404, 'inactive_user', 'the profile you requested is not active'));
    for (const res of [await respond(ada, gone.handle, 'accept'), await unfrodad(ada, gone.handle), await sys.get(`/api/profile/${gone.handle}/frodads/`, ada)]) {
      expectError(res, 404, 'inactive_user', 'the profile you requested is not active');
    }
  });

  it('401 without credentials', async () => {
    const bob = await sys.signUp();
    expectError(await sys.post(`/api/add-frodad/${bob.handle}/`), 401, 'authentication_failed');
    expectError(await sys.get('/api/frodad-requests/'), 401, 'authentication_failed');
  });
});

describe('deleted accounts vanish', () => {
  it('from requests lists and frodads lists, and stop counting', async () => {
    const me = await sys.signUp();
    const asker = await sys.signUp();
    const asked = await sys.signUp();
    const friend = await sys.signUp();
    expectMessage(await addFrodad(asker, me.handle), 'friend request sent');
    expectMessage(await addFrodad(me, asked.handle), 'friend request sent');
    await frodads(friend, me);
    await eventually(async () => expect(await requestsOf(me)).toMatchObject({ number_received: 1, number_sent: 1 }));
    expect((await profileOf(me, me.handle)).profileInfo.frodadsNumber).toBe(1);

    for (const gone of [asker, asked, friend]) expect((await sys.post(`/api/profile/${gone.handle}/delete/`, {}, gone)).status).toBe(200);
    await eventually(async () => {
      expect(await requestsOf(me)).toEqual({ status: 200, number_received: 0, requests_received: null, number_sent: 0, requests_sent: null });
      const mine = await profileOf(me, me.handle);
      expect(mine.profileInfo.frodadsNumber).toBe(0);
      expect(mine.myFrodads).toEqual({});
    });
  });
});
