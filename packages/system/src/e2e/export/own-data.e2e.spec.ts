import { internalHeaders, OwnDataExportSchema, type ExportedForecast, type OwnDataExport } from '@castie/contracts';
import { inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, eventually, TestSystem, type TestUser } from '../../testing/harness.ts';

// The own-data export (GET /api/export/): everything of the requester, nothing of anyone else.
let sys: TestSystem;
let ada: TestUser;
let bob: TestUser;
let eve: TestUser;
/** A Castie of the closed group ada does not belong to, forecast and commented on by bob. */
let secretQuestion: string;
let secretComment: string;

const create = async (as: TestUser, group: string, fields: Record<string, string | string[]> = {}) => {
  const res = await sys.post('/api/casties/create/', { group_slug: group, poll_type: 'Open', question: 'Snow in May?', answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'true', ...fields }, as);
  expect(res.status, res.text).toBe(200);
  return res.body.castie_uuid as string;
};
const optionId = async (as: TestUser, uuid: string, text: string) => {
  const options = (await sys.get(`/api/casties/${uuid}/answer/`, as)).body.answer_options as Record<string, string>;
  return Object.entries(options).find(([, t]) => t === text)![0];
};

async function exportOf(user: TestUser): Promise<OwnDataExport> {
  const res = await sys.get('/api/export/', user);
  expect(res.status, res.text.slice(0, 300)).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return OwnDataExportSchema.parse(JSON.parse(res.text));
}

/** The entries of a zip (stored or deflated), read from its central directory with Node's zlib. */
function unzip(zip: Buffer): Map<string, string> {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  expect(end).toBeGreaterThan(0);
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const files = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    expect(zip.readUInt32LE(at)).toBe(0x02014b50);
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const [nameLength, extraLength, commentLength] = [zip.readUInt16LE(at + 28), zip.readUInt16LE(at + 30), zip.readUInt16LE(at + 32)];
    const local = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    const dataAt = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(dataAt, dataAt + size);
    files.set(name, (method === 8 ? inflateRawSync(data) : data).toString('utf8'));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return files;
}

/** RFC 4180 rows: quoted cells may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  return rows;
}

beforeAll(async () => {
  sys = await TestSystem.start();
  [ada, bob, eve] = [await sys.signUp(), await sys.signUp(), await sys.signUp()];
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'open', groupName: 'Open', groupInfoText: 'all', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'closed', groupName: 'Closed', groupInfoText: 'members', requiresApproval: true, accessDeniedMessage: 'ask' })).status).toBe(200);
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'vault', groupName: 'Vault', groupInfoText: 'requests', requiresApproval: true, accessDeniedMessage: 'ask' })).status).toBe(200);
  for (const u of [ada, bob, eve]) await sys.post('/api/groups/open/follow/', {}, u);
  await sys.post('/api/groups/closed/follow/', {}, bob);
  await sys.admin('POST', `/admin/groups/closed/access/${bob.handle}/grant/`);
  // ada asked to join the vault: pending, still hers to take along.
  await sys.post('/api/groups/vault/follow/', {}, ada);

  // ada: Casties (one with a formula-looking question), forecasts, comments, a frodad, a request.
  const mine = await create(ada, 'open', { question: '=HYPERLINK("http://evil.example","click"), really?' });
  const bobs = await create(bob, 'open', { question: 'Rain, "heavy", on Friday?' });
  const eves = await create(eve, 'open', { question: 'Eve asks: sun?', answer_type: 'Write-in answers', answer_option: [] });
  await sys.post(`/api/casties/${bobs}/forecast/`, { answer_id: await optionId(bob, bobs, 'Yes') }, ada);
  // A minute later: the export lists forecasts newest first.
  sys.clock.advance(60);
  await sys.post(`/api/casties/${eves}/forecast/`, { forecast_text: '+1 sunny' }, ada);
  await sys.post(`/api/casties/${mine}/forecast/`, { answer_id: await optionId(ada, mine, 'No') }, bob);
  await sys.post(`/api/casties/${mine}/forecast/`, { answer_id: await optionId(ada, mine, 'Yes') }, eve);
  expect((await sys.post(`/api/casties/${bobs}/comment/`, { commentText: '@everyone look, "quoted"\nand a new line' }, ada)).status).toBe(200);
  expect((await sys.post(`/api/casties/${bobs}/comment/`, { commentText: 'bob says hi' }, bob)).status).toBe(200);
  await sys.post(`/api/add-frodad/${ada.handle}/`, {}, bob);
  await sys.post(`/api/frodad-requests/${bob.handle}/accept/`, {}, ada);
  await sys.post(`/api/add-frodad/${eve.handle}/`, {}, ada);

  // What ada must never see: the closed group's Casty, bob's forecast and comment on it.
  secretQuestion = 'Members only: merger on Monday?';
  secretComment = 'insider tip for members';
  const secret = await create(bob, 'closed', { question: secretQuestion });
  await sys.post(`/api/casties/${secret}/forecast/`, { answer_id: await optionId(bob, secret, 'Yes') }, bob);
  expect((await sys.post(`/api/casties/${secret}/comment/`, { commentText: secretComment }, bob)).status).toBe(200);
});
afterAll(() => sys.close());

describe('the JSON export', () => {
  it('holds each section as the API answers it to the requester', async () => {
    const doc = await eventually(async () => {
      const d = await exportOf(ada);
      expect(d.notifications.length).toBeGreaterThan(0);
      return d;
    });
    const profileEdit = (await sys.get(`/api/profile/${ada.handle}/edit/`, ada)).body;
    const { status: _s, ...profile } = profileEdit;
    expect(doc.profile).toMatchObject({ ...profile, email: ada.email });
    expect(doc.profile.profileInfo.handle).toBe(ada.handle);
    expect(doc.preferences).toEqual({ is_private: (await sys.get('/api/preferences/', ada)).body.is_private });

    expect(Object.keys(doc.groups).sort()).toEqual(['open', 'vault']);
    expect(doc.groups.vault!.access).toBe('pending');
    const listed = (await sys.get('/api/groups/', ada)).body.groups as Record<string, unknown>;
    expect(doc.groups.open).toEqual(listed.open);

    const frodads = (await sys.get(`/api/profile/${ada.handle}/frodads/`, ada)).body.myFrodads;
    expect(doc.frodads).toEqual(frodads);
    expect(doc.frodad_requests.requests_sent.map((r) => r.handle)).toEqual([eve.handle]);

    const mine = (await sys.get(`/api/profile/${ada.handle}/mycasties/`, ada)).body.myCasties as Record<string, { question: string }>;
    expect(doc.casties.map((c) => c.uuid).sort()).toEqual(Object.keys(mine).sort());
    expect(doc.casties[0]).toMatchObject({ question: Object.values(mine)[0]!.question, forecasts: 2, answer_options: [{ text: 'Yes' }, { text: 'No' }] });

    const stats = (await sys.get(`/api/profile/${ada.handle}/stats/`, ada)).body.myForecasts as Record<string, { uuid: string; forecast: string; points_earned: number }>;
    expect(doc.forecasts.map((f) => String(f.forecast_id)).sort()).toEqual(Object.keys(stats).sort());
    for (const f of doc.forecasts) expect(stats[String(f.forecast_id)]).toMatchObject({ uuid: f.uuid, forecast: f.forecast, points_earned: f.points_earned });

    expect(doc.comments.map((c) => c.text)).toEqual(['@everyone look, "quoted"\nand a new line']);
    const notifications = (await sys.get('/api/notifications/', ada)).body.notifications as unknown[];
    expect(doc.notifications.length).toBe(notifications.length);
  });

  it('pages the forecasts newest first, each once, whatever the page size; a forged cursor is refused', async () => {
    const userId = ((await sys.get(`/api/profile/${ada.handle}/stats/`, ada)).body as { profileInfo: { user_uuid: string } }).profileInfo.user_uuid;
    const casties = sys.system.services.get('casties')!.app;
    const page = (query: string) => casties.inject({ method: 'GET', url: `/internal/export/forecasts/?${query}`, headers: { [internalHeaders.userId]: userId } });
    const whole = (await page('limit=1000')).json() as { items: ExportedForecast[]; next: string | null };
    expect(whole.items).toHaveLength(2);
    expect(whole.next).toBeNull();
    const paged: ExportedForecast[] = [];
    let after: string | null = null;
    do {
      const res = await page(`limit=1${after === null ? '' : `&after=${encodeURIComponent(after)}`}`);
      expect(res.statusCode).toBe(200);
      const body = res.json() as { items: ExportedForecast[]; next: string | null };
      paged.push(...body.items);
      after = body.next;
    } while (after !== null && paged.length < 10);
    expect(paged).toEqual(whole.items);
    expect(paged.map((f) => f.forecast)).toEqual(['+1 sunny', 'Yes']);
    for (const forged of ['nobar', '|x', 'x|', 'yesterday|x']) expect((await page(`after=${encodeURIComponent(forged)}`)).statusCode, forged).toBe(400);
  });

  it('holds nothing of others beyond what the requester already sees', async () => {
    const res = await sys.get('/api/export/', ada);
    expect(res.status).toBe(200);
    for (const other of [bob, eve]) expect(res.text).not.toContain(other.email);
    expect(res.text).not.toContain(secretQuestion);
    expect(res.text).not.toContain(secretComment);
    expect(res.text).not.toContain('bob says hi');
    expect(res.text).not.toContain('closed');
    // Who forecast what on ada's Castie is theirs: only the count is hers.
    const doc = JSON.parse(res.text) as OwnDataExport;
    expect(doc.casties[0]).not.toHaveProperty('friendForecasts');
    expect(JSON.stringify(doc.casties)).not.toContain(bob.handle);
  });

  it('does not mark notifications read', async () => {
    const before = (await sys.get('/api/initialize/', eve)).body;
    await exportOf(eve);
    expect((await sys.get('/api/initialize/', eve)).body).toEqual(before);
  });

  it('answers 401 without credentials and with wrong ones', async () => {
    expect((await sys.get('/api/export/')).status).toBe(401);
    expect((await sys.get('/api/export/', { ...ada, password: 'wrong' })).status).toBe(401);
    expect((await sys.get('/api/export/?format=csv')).status).toBe(401);
  });

  it('refuses an unknown format', async () => {
    const res = await sys.get('/api/export/?format=xml', ada);
    expect(res.status).toBe(400);
    expect(res.body.error_type).toBe('missing_request_data');
  });

  it('runs one export at a time per person (429), and the next once it ended', async () => {
    // A long history (about 60 KB of comments): its export outlasts what a reader's buffers take
    // at once, so while nobody reads it, it stays open and holds its slot.
    const talker = await sys.signUp();
    await sys.post('/api/groups/open/follow/', {}, talker);
    const topic = await create(talker, 'open', { question: 'Talk all day?' });
    for (let i = 0; i < 120; i++) expect((await sys.post(`/api/casties/${topic}/comment/`, { commentText: `${i} ${'blah '.repeat(99)}` }, talker)).status).toBe(200);
    const headers = { authorization: basic(talker) };
    const first = await sys.system.gateway.inject({ method: 'GET', url: '/api/export/', headers, payloadAsStream: true });
    expect(first.statusCode).toBe(200);
    const second = await sys.system.gateway.inject({ method: 'GET', url: '/api/export/', headers });
    expect(second.statusCode).toBe(429);
    expect(second.headers['retry-after']).toBeDefined();
    expect(second.json()).toMatchObject({ error_type: 'too_many_requests' });
    // Others are not held up meanwhile.
    expect((await sys.get('/api/export/', bob)).status).toBe(200);
    // The first export reads to its end, whole; then the next one may start.
    const chunks: Buffer[] = [];
    for await (const chunk of first.stream()) chunks.push(chunk as Buffer);
    expect(OwnDataExportSchema.parse(JSON.parse(Buffer.concat(chunks).toString('utf8'))).comments).toHaveLength(120);
    expect((await sys.get('/api/export/', talker)).status).toBe(200);
  });
});

describe('the CSV export', () => {
  it('is a zip of CSV files with the forecasts, quoted and safe from formulas', async () => {
    const res = await sys.system.gateway.inject({ method: 'GET', url: '/api/export/?format=csv', headers: { authorization: basic(ada) } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    const files = unzip(res.rawPayload);
    expect([...files.keys()].sort()).toEqual(['casties.csv', 'comments.csv', 'forecasts.csv']);
    const doc = await exportOf(ada);

    const forecasts = parseCsv(files.get('forecasts.csv')!);
    expect(forecasts[0]).toContain('forecast_id');
    expect(forecasts.length - 1).toBe(doc.forecasts.length);
    const column = (rows: string[][], name: string) => rows.slice(1).map((r) => r[rows[0]!.indexOf(name)]);
    expect(column(forecasts, 'question').sort()).toEqual(['Eve asks: sun?', 'Rain, "heavy", on Friday?']);
    // A cell starting with = + - @ is prefixed with an apostrophe, so spreadsheets show it as text.
    expect(column(forecasts, 'forecast')).toContain("'+1 sunny");
    const casties = parseCsv(files.get('casties.csv')!);
    expect(column(casties, 'question')).toEqual(['\'=HYPERLINK("http://evil.example","click"), really?']);
    const comments = parseCsv(files.get('comments.csv')!);
    expect(column(comments, 'text')).toEqual(['\'@everyone look, "quoted"\nand a new line']);
    // No formula cell anywhere: every cell that starts with one of = + - @ is a number or prefixed.
    for (const text of files.values()) for (const row of parseCsv(text)) for (const cell of row) expect(/^[=+@]/.test(cell) || (/^-/.test(cell) && Number.isNaN(Number(cell)))).toBe(false);
    expect(files.get('forecasts.csv')).not.toContain(secretQuestion);
  });
});
