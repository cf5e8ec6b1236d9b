import { CASTIE_VIEWS, FORECASTS, forecastDocId, forecastsOfCastie } from '@castie/casties';
import type { DocumentStore } from '@castie/platform';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, TestSystem, type TestUser } from '../../testing/harness.ts';

// The export streams: a person with many forecasts is exported while the heap stays flat,
// whatever the size of the document (behaviour, not timing).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterGc = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

// 40k: what the heap holds while an export runs is about 4 MB whatever the document's size (a
// page or two in flight, the bounded caches turning over); at 20k (a 20 MB document, a 4 MB
// bound) that fixed part alone failed the bound on a loaded machine.
const FORECASTS_COUNT = 40_000;
let sys: TestSystem;
let casties: DocumentStore;
let ada: TestUser;

beforeAll(async () => {
  sys = await TestSystem.start({
    checkResponses: false,
    wrapDocuments: (service, store) => {
      if (service === 'casties') casties = store;
      return store;
    },
  });
  ada = await sys.signUp();
  expect((await sys.admin('POST', '/admin/groups/', { slug: 'open', groupName: 'Open', groupInfoText: 'all', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
  await sys.post('/api/groups/open/follow/', {}, ada);
  const create = await sys.post('/api/casties/create/', { group_slug: 'open', poll_type: 'Open', question: 'Q', answer_type: 'Write-in answers', display_created_by: 'true' }, ada);
  const uuid = create.body.castie_uuid as string;
  expect((await sys.post(`/api/casties/${uuid}/forecast/`, { forecast_text: 'first' }, ada)).status).toBe(200);
  // Her next read waits until the read models hold her forecast (session consistency).
  expect(Object.keys((await sys.get(`/api/profile/${ada.handle}/stats/`, ada)).body.myForecasts as object)).toHaveLength(1);
  // The history, written straight into the read model (as a rebuild would leave it): one
  // Castie per forecast, each with a long question so that the document is large.
  const view = (await casties.collection(CASTIE_VIEWS).findOne({ _id: uuid }))!;
  const forecast = (await casties.collection(FORECASTS).findOne(forecastsOfCastie(uuid)))!;
  await casties.transaction(async (unit) => {
    const views = unit.collection(CASTIE_VIEWS);
    const forecasts = unit.collection(FORECASTS);
    for (let i = 0; i < FORECASTS_COUNT; i++) {
      const id = `${uuid.slice(0, 20)}${i.toString(16).padStart(12, '0')}`;
      const { _applied: _v, ...viewFields } = view;
      const { _applied: _f, ...forecastFields } = forecast;
      await views.insertOne({ ...structuredClone(viewFields), _id: id, question: `Question ${i}: ${'will it happen, and when exactly? '.repeat(6)}` });
      await forecasts.insertOne({ ...structuredClone(forecastFields), _id: forecastDocId(id, forecast.userId), castieId: id, forecastId: 1_000_000 + i, text: `forecast ${i}` });
    }
  });
}, 120_000);
afterAll(() => sys.close());

describe('exporting a long history', () => {
  it('streams 40k forecasts while the heap grows by a small fraction of the document', async () => {
    const address = await sys.system.gateway.listen({ port: 0, host: '127.0.0.1' });
    // A first export fills what is bounded by design (each store's document cache, 16 MiB) and
    // warms the code; the second one shows what an export itself holds.
    const warm = await fetch(`${address}/api/export/`, { headers: { authorization: basic(ada) } });
    for await (const _chunk of warm.body as unknown as AsyncIterable<Uint8Array>);
    const baseline = heapAfterGc();
    let peak = baseline;
    let bytes = 0;
    let tail = '';
    const res = await fetch(`${address}/api/export/`, { headers: { authorization: basic(ada) } });
    expect(res.status).toBe(200);
    let chunks = 0;
    // Read the answer as a client does, keeping none of it but its last bytes; measure as it flows.
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      tail = (tail + Buffer.from(chunk).toString('latin1')).slice(-200);
      if (++chunks % 50 === 0) peak = Math.max(peak, heapAfterGc());
    }
    peak = Math.max(peak, heapAfterGc());
    const growth = peak - baseline;
    expect(tail.endsWith(']}')).toBe(true);
    expect(bytes).toBeGreaterThan(FORECASTS_COUNT * 300);
    // The whole document held at once would be `bytes` of text (twice that as a JS string) plus
    // its parsed objects; streamed, the heap holds a page or two.
    expect(growth, `heap grew ${growth} bytes for a document of ${bytes} bytes`).toBeLessThan(bytes / 5);
  }, 120_000);
});
