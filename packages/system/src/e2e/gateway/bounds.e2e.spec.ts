import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, TestSystem, type TestUser } from '../../testing/harness.ts';

// Every text input is bounded, control characters are refused, booleans and numbers are strict
// (hardening review, findings 3 and 9; decisions.md "Added for the second version").
let sys: TestSystem;
let ada: TestUser;
let bob: TestUser;

beforeAll(async () => {
  sys = await TestSystem.start({ env: { CLOCK: 'manual' } });
  [ada, bob] = [await sys.signUp(), await sys.signUp()];
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'bounds', groupName: 'Bounds', groupInfoText: 'x', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
  for (const u of [ada, bob]) await sys.post('/api/groups/bounds/follow/', {}, u);
});
afterAll(() => sys.close());

const create = (fields: Record<string, string | string[]>, as = ada) =>
  sys.post('/api/casties/create/', { group_slug: 'bounds', poll_type: 'Open', question: 'Bounded?', answer_type: 'Write-in answers', display_created_by: 'true', ...fields }, as);

const refused = (res: { status: number; body: Record<string, unknown> }, errorType: string, field: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toMatchObject({ status: 400, error_type: errorType });
  expect(res.body.error_message).toContain(field);
};

describe('text is bounded, with the endpoint’s own error type', () => {
  it('a write-in forecast of 201 characters (or 700 KB) is refused with cannot_forecast; 200 pass', async () => {
    const uuid = (await create({})).body.castie_uuid as string;
    refused(await sys.post(`/api/casties/${uuid}/forecast/`, { forecast_text: 'x'.repeat(700_000) }, bob), 'cannot_forecast', 'forecast_text');
    refused(await sys.post(`/api/casties/${uuid}/forecast/`, { forecast_text: 'x'.repeat(201) }, bob), 'cannot_forecast', 'forecast_text');
    expect((await sys.post(`/api/casties/${uuid}/forecast/`, { forecast_text: 'x'.repeat(200) }, bob)).status).toBe(200);
    // Nobody received the long ones: the detail stays small.
    expect((await sys.get(`/api/casties/${uuid}/`, ada)).text.length).toBeLessThan(5000);
  });

  it('the answer keyword has a limit too', async () => {
    const uuid = (await create({})).body.castie_uuid as string;
    refused(await sys.post(`/api/casties/${uuid}/answer/`, { keyword: 'k'.repeat(201) }, ada), 'missing_request_data', 'keyword');
  });

  it('questions, options, comments and names refuse control characters; questions and comments keep line breaks', async () => {
    refused(await create({ question: 'NUL\u0000inside?' }), 'castie_not_created', 'question');
    refused(await create({ answer_type: 'Set answer options', answer_option: ['Yes', 'N\u0007o'] }), 'castie_not_created', 'answer_option');
    refused(await create({ answer_type: 'Set answer options', answer_option: Array.from({ length: 21 }, (_, i) => `o${i}`) }), 'castie_not_created', 'answer_option');
    refused(await create({ answer_type: 'Set answer options', answer_option: ['Yes', 'o'.repeat(201)] }), 'castie_not_created', 'answer_option');
    const twoLines = await create({ question: 'Line one\nline two?' });
    expect(twoLines.status).toBe(200);
    const uuid = twoLines.body.castie_uuid as string;
    refused(await sys.post(`/api/casties/${uuid}/comment/`, { commentText: 'bad\u0000byte' }, bob), 'comment_not_created', 'commentText');
    expect((await sys.post(`/api/casties/${uuid}/comment/`, { commentText: 'two\nlines' }, bob)).status).toBe(200);
    refused(await sys.post('/api/profile/edit/', { city: 'c'.repeat(101) }, ada), 'invalid_request', 'city');
    refused(await sys.post('/api/profile/edit/', { firstName: 'Tab\tbed' }, ada), 'invalid_request', 'firstName');
    refused(await sys.get('/api/search/casties/?q=' + 'q'.repeat(201), ada), 'missing_request_data', 'q');
    refused(await sys.get('/api/search/people/?q=' + 'q'.repeat(201), ada), 'missing_request_data', 'q');
  });

  it('a password longer than 256 characters is refused for what it is, not as missing', async () => {
    const user = newUser('longpw');
    await sys.post('/api/signup/email/', { email: user.email });
    for (const length of [257, 100_000]) {
      const res = await sys.post('/api/signup/password/', { email: user.email, password: 'p'.repeat(length) });
      refused(res, 'account_not_created', 'password');
      expect(res.body.error_message).toContain('at most 256');
    }
  });
});

describe('booleans and numbers are strict', () => {
  it('is_private and display_created_by take true/false/1/0/on/off, not "", 123 or 1.5', async () => {
    for (const bad of ['', '123', '1.5', 'yes']) refused(await sys.post('/api/preferences/', { is_private: bad }, ada), 'missing_request_data', 'is_private');
    for (const bad of [123, 1.5]) refused(await sys.request('POST', '/api/preferences/', { user: ada, json: { is_private: bad } }), 'missing_request_data', 'is_private');
    refused(await create({ display_created_by: '' }), 'castie_not_created', 'display_created_by');
    expect((await sys.post('/api/preferences/', { is_private: 'off' }, ada)).body).toMatchObject({ status: 200, is_private: false });
  });

  it('the admin clock takes a number of seconds, at most a year: not true, not "1e9"', async () => {
    const before = sys.clock.now().getTime();
    for (const bad of [true, '1e9', '-5', 400 * 24 * 3600, 'abc']) {
      const res = await sys.admin('POST', '/admin/clock/', { advance_seconds: bad });
      expect(res.status, String(bad)).toBe(400);
      expect(res.body).toMatchObject({ error_type: 'missing_request_data' });
    }
    expect(sys.clock.now().getTime()).toBe(before);
    expect((await sys.admin('POST', '/admin/clock/', { advance_seconds: '90' })).status).toBe(200);
  });
});
