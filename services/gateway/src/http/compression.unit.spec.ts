import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { RepeatedAnswers, systemClock } from '@castie/platform';
import { compression } from './compression.ts';

// The compression plugin on a bare app: what the gateway's answers get, case by case.
let app: FastifyInstance;
const text = JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ id: i, question: `Will it rain on day ${i}?` })) });
const numbered = (n: string) => text.replace('"items"', `"n${n.padStart(4, '0').slice(0, 4)}"`);
const huge = JSON.stringify({ rows: Array.from({ length: 300_000 }, (_, i) => `row ${i} ${(i * 7919) % 10007}`) });

beforeAll(async () => {
  app = Fastify();
  await app.register(compression);
  app.get('/text', async (_request, reply) => reply.type('application/json; charset=utf-8').send(text));
  app.get('/huge', async (_request, reply) => reply.type('application/json; charset=utf-8').send(huge));
  // Answers of one length whose text differs by the requested number.
  app.get('/numbered/:n', async (request, reply) => reply.type('application/json; charset=utf-8').send(numbered((request.params as { n: string }).n)));
  // The same texts as bytes: kept answers (one Buffer each, given again and again, as the
  // services' repeated answers are), and Buffers made anew each time.
  const answers = new RepeatedAnswers({ version: () => 1, clock: systemClock });
  app.get('/kept/:n', async (request, reply) => {
    const { n } = request.params as { n: string };
    const bytes = answers.find(n) ?? answers.keep(n, answers.begin()!, Buffer.from(numbered(n)), Infinity);
    return reply.type('application/json; charset=utf-8').send(bytes);
  });
  app.get('/bytes/:n', async (request, reply) => reply.type('application/json; charset=utf-8').send(Buffer.from(numbered((request.params as { n: string }).n))));
  app.get('/varied', async (_request, reply) => reply.header('vary', 'Origin').type('application/json; charset=utf-8').send(text));
  app.route({ method: 'GET', url: '/opted-out', compress: false, handler: async (_request, reply) => reply.type('application/json; charset=utf-8').send(text) });
  await app.ready();
});
afterAll(() => app.close());

const get = (url: string, acceptEncoding: string) => app.inject({ method: 'GET', url, headers: { 'accept-encoding': acceptEncoding } });

describe('compressing whole answers', () => {
  it('sends the compressed bytes with their own length, and they decode to the answer', async () => {
    for (const [encoding, decode] of [['br', brotliDecompressSync], ['gzip', gunzipSync]] as const) {
      const res = await get('/text', encoding);
      expect(res.headers['content-encoding']).toBe(encoding);
      expect(res.headers.vary).toBe('accept-encoding');
      expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length);
      expect(res.rawPayload.length).toBeLessThan(Buffer.byteLength(text) / 3);
      expect(decode(res.rawPayload).toString('utf8')).toBe(text);
    }
  });

  it('gives each answer its own bytes, however often the same answers are asked for, as texts or as bytes', async () => {
    const decodes = { br: brotliDecompressSync, gzip: gunzipSync } as const;
    for (let round = 0; round < 3; round++) {
      for (const [n, as] of [['1', 'numbered'], ['2', 'kept'], ['1', 'bytes'], ['3', 'kept'], ['1', 'kept'], ['2', 'numbered'], ['3', 'bytes']] as const) {
        for (const encoding of ['br', 'gzip'] as const) {
          const res = await get(`/${as}/${n}`, encoding);
          expect(res.headers['content-encoding']).toBe(encoding);
          expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length);
          expect(decodes[encoding](res.rawPayload).toString('utf8')).toBe(numbered(n));
        }
      }
    }
  });

  it('decodes an answer larger than the largest brotli window', async () => {
    expect(Buffer.byteLength(huge)).toBeGreaterThan(1 << 22);
    const res = await get('/huge', 'br');
    expect(res.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(res.rawPayload).toString('utf8')).toBe(huge);
  });

  it('adds accept-encoding to a Vary the answer already has', async () => {
    const res = await get('/varied', 'gzip');
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(String(res.headers.vary).toLowerCase()).toBe('origin, accept-encoding');
  });

  it('leaves a route declared with compress: false as it is', async () => {
    const res = await get('/opted-out', 'br, gzip');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.payload).toBe(text);
  });
});
