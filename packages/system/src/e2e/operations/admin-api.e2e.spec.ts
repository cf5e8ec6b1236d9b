import { ErrorBodySchema, groupsAdminApi, identityAdminApi, readModelsAdminApi, type ServiceName } from '@castie/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, TestSystem, type TestResponse } from '../../testing/harness.ts';

// The admin endpoints operators reach through the gateway (the CLI's, and curl's): behind the
// bearer token, answering the spec's envelope for bad input and unknown groups or handles. Every
// success is checked against its contract by the services (checkResponses).
let sys: TestSystem;
beforeAll(async () => {
  sys = await TestSystem.start();
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'club', groupName: 'Club', groupInfoText: '', requiresApproval: true, accessDeniedMessage: '' })).status).toBe(200);
}, 30_000);
afterAll(() => sys?.close(), 30_000);

const anError = (res: TestResponse, status: number, type: string) => {
  expect(res.status, res.text).toBe(status);
  expect(ErrorBodySchema.parse(res.body)).toMatchObject({ status, error_type: type });
};

const newEndpoints = [
  ['GET', '/admin/groups/'],
  ['GET', '/admin/groups/club/'],
  ['GET', '/admin/access-requests/'],
  ['POST', '/admin/groups/club/access/someone/deny/'],
  ['POST', '/admin/accounts/'],
  ['GET', '/admin/read-models/casties/'],
  ['POST', '/admin/read-models/groups/rebuild/'],
  ['GET', '/admin/read-models/social/dead-letters/'],
  ['POST', '/admin/read-models/notifications/dead-letters/groups:0:0/replay/'],
] as const;

describe('admin API: new endpoints', () => {
  it('refuses every one without the bearer token, or with a wrong one (401 authorization_failed)', async () => {
    for (const [method, url] of newEndpoints) {
      anError(await sys.request(method, url, { json: {} }), 401, 'authorization_failed');
      anError(await sys.request(method, url, { json: {}, headers: { authorization: 'Bearer wrong' } }), 401, 'authorization_failed');
    }
  });

  it('the services answer their /admin/ routes only to the gateway (its admin header), however the path is spelled', async () => {
    const person = newUser('direct');
    const account = { email: person.email, handle: person.handle, first_name: 'Di', last_name: 'Rect', password: 'secret1' };
    const direct: [ServiceName, 'GET' | 'POST', string][] = [
      ['identity', 'POST', '/admin/accounts/'],
      ['identity', 'POST', '//admin/accounts/'],
      ['identity', 'POST', '///admin//accounts/'],
      ['groups', 'GET', '//admin/groups/'],
      ['groups', 'POST', '//admin/groups/club/access/someone/grant/'],
      ['social', 'GET', '//admin/read-models/social/dead-letters/'],
      ['casties', 'POST', '//admin/read-models/casties/rebuild/'],
    ];
    for (const [service, method, url] of direct) {
      const res = await sys.system.services.get(service)!.app.inject({ method, url, ...(method === 'POST' ? { payload: account } : {}) });
      expect(res.statusCode, `${service} ${method} ${url}: ${res.body}`).toBe(401);
      expect(ErrorBodySchema.parse(res.json()).error_type).toBe('authorization_failed');
    }
    // No account was opened on the way: the e-mail is still free for the app's sign-up.
    expect((await sys.post('/api/signup/email/', { email: person.email })).status).toBe(200);
  });

  it('lists pending requests of one group or of all, and denies one', async () => {
    const [ada, bob] = [await sys.signUp(newUser('ada')), await sys.signUp(newUser('bob'))];
    for (const u of [ada, bob]) await sys.post('/api/groups/club/follow/', {}, u);
    const all = groupsAdminApi.accessRequests.response.parse((await sys.admin('GET', '/admin/access-requests/')).body);
    expect(all.requests.map((r) => [r.group_slug, r.handle])).toEqual([
      ['club', ada.handle],
      ['club', bob.handle],
    ]);
    const denied = await sys.admin('POST', `/admin/groups/club/access/${bob.handle}/deny/`);
    expect(groupsAdminApi.denyAccess.response.parse(denied.body)).toMatchObject({ handle: bob.handle, access: null, following: false });
    const left = groupsAdminApi.accessRequests.response.parse((await sys.admin('GET', '/admin/access-requests/?group=club')).body);
    expect(left.requests.map((r) => r.handle)).toEqual([ada.handle]);
    // Denying again: nothing is pending any more.
    anError(await sys.admin('POST', `/admin/groups/club/access/${bob.handle}/deny/`), 400, 'improper_group_request');
  });

  it('answers 404 object_not_found for an unknown group or handle', async () => {
    const ada = await sys.signUp(newUser('ada'));
    anError(await sys.admin('GET', '/admin/access-requests/?group=nope'), 404, 'object_not_found');
    anError(await sys.admin('GET', '/admin/groups/nope/'), 404, 'object_not_found');
    anError(await sys.admin('POST', `/admin/groups/nope/access/${ada.handle}/deny/`), 404, 'object_not_found');
    anError(await sys.admin('POST', '/admin/groups/club/access/nobody-here/deny/'), 404, 'object_not_found');
    anError(await sys.admin('POST', '/admin/read-models/identity/rebuild/'), 404, 'object_not_found');
    anError(await sys.admin('GET', '/admin/read-models/billing/dead-letters/'), 404, 'object_not_found');
    anError(await sys.admin('POST', '/admin/read-models/casties/dead-letters/groups:0:999/replay/'), 404, 'object_not_found');
  });

  it('answers 400 in the envelope for bad input', async () => {
    anError(await sys.admin('POST', '/admin/accounts/', { email: 'not-an-email', handle: 'abc', first_name: 'A', last_name: 'B', password: 'secret1' }), 400, 'account_not_created');
    anError(await sys.admin('POST', '/admin/accounts/', { email: 'x@example.com', handle: 'a/b', first_name: 'A', last_name: 'B', password: 'secret1' }), 400, 'account_not_created');
    anError(await sys.admin('POST', '/admin/accounts/', { email: 'x@example.com', handle: 'abcd', first_name: 'A', last_name: 'B', password: 'abc' }), 400, 'account_not_created');
    // A missing parameter is missing_request_data (decisions.md), naming it.
    const missing = await sys.admin('POST', '/admin/accounts/', { email: 'x@example.com' });
    anError(missing, 400, 'missing_request_data');
    expect(missing.body.error_message).toMatch(/password|handle|first_name|last_name/);
    anError(await sys.admin('POST', '/admin/read-models/casties/dead-letters/nonsense/replay/'), 400, 'missing_request_data');
  });

  it('creates an account that signs in, and refuses a taken e-mail or handle', async () => {
    const person = newUser('sam');
    const body = { email: person.email, handle: person.handle, first_name: 'Sam', last_name: 'Lee', password: 'secret1' };
    const created = await sys.admin('POST', '/admin/accounts/', body);
    expect(identityAdminApi.createAccount.response.parse(created.body)).toMatchObject({ email: person.email, handle: person.handle });
    expect((await sys.post('/api/login/', { last_seen_date: '2026-01-01', last_seen_time: '00:00:00' }, person)).status).toBe(200);
    anError(await sys.admin('POST', '/admin/accounts/', body), 400, 'email_not_unique');
    anError(await sys.admin('POST', '/admin/accounts/', { ...body, email: `other.${person.email}` }), 400, 'handle_not_unique');
  });

  it('shows the read models of a service and rebuilds them', async () => {
    const api = readModelsAdminApi('social');
    expect(api.state.response.parse((await sys.admin('GET', '/admin/read-models/social/')).body)).toMatchObject({ service: 'social', group: 'social-read', state: 'ready' });
    const rebuilt = await sys.admin('POST', '/admin/read-models/social/rebuild/');
    expect(api.rebuild.response.parse(rebuilt.body)).toMatchObject({ state: 'ready' });
    expect(api.deadLetters.response.parse((await sys.admin('GET', '/admin/read-models/social/dead-letters/')).body).number_dead_letters).toBe(0);
  });
});
