import { createServer, type Server } from 'node:http';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { bodyText, httpClient, inProcessClient } from './service-client.ts';

describe('the cluster gateway’s HTTP client', () => {
  let server: Server;
  let base: string;
  const seen: { host: string | undefined; url: string | undefined }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ host: req.headers.host, url: req.url });
      res.setHeader('content-type', 'application/json').end('{"status":200}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends a path that starts with two slashes to the service, never to the host it names', async () => {
    const client = httpClient(`${base}/`);
    const res = await client.request({ method: 'GET', url: '//elsewhere.invalid/api/preferences/?x=1', headers: { 'x-castie-user-id': 'u1' } });
    expect(res.statusCode).toBe(200);
    expect(seen.at(-1)).toEqual({ host: base.replace('http://', ''), url: '/elsewhere.invalid/api/preferences/?x=1' });
  });

  it('sends an ordinary path as it is', async () => {
    await httpClient(base).request({ method: 'GET', url: '/api/home/new/?ids=true', headers: {} });
    expect(seen.at(-1)?.url).toBe('/api/home/new/?ids=true');
  });
});

describe('the embedded gateway’s in-process client', () => {
  const app = Fastify();
  const client = inProcessClient(app);
  const page = JSON.stringify({ status: 200, question: 'Ünïcode — “quotes” 🎲', list: Array.from({ length: 2000 }, (_, i) => i) });
  app.get('/text', async (_request, reply) => reply.type('application/json; charset=utf-8').send(page));
  app.get('/bytes', async (_request, reply) => reply.type('image/png').send(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255])));
  app.get('/fails', async () => {
    throw Object.assign(new Error('nope'), { statusCode: 409 });
  });
  app.post('/echo', async (request) => ({ status: 200, got: request.body, ip: request.ip, method: request.method, url: request.url, user: request.headers['x-castie-user-id'] }));
  app.get('/streamed', async (_request, reply) => reply.type('text/csv').send(Readable.from(['a,b\n', Buffer.from('1,2\n'), 'ü,é\n'])));
  beforeAll(() => app.ready());
  afterAll(() => app.close());

  it('hands a text answer over as the same text, with its status and content type', async () => {
    const res = await client.request({ method: 'GET', url: '/text', headers: {} });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(bodyText(res)).toBe(page);
  });

  it('hands bytes over as bytes, unchanged', async () => {
    const res = await client.request({ method: 'GET', url: '/bytes', headers: {} });
    expect(Buffer.isBuffer(res.body)).toBe(true);
    expect([...(res.body as Buffer)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0, 255]);
  });

  it('passes error answers and JSON bodies through', async () => {
    const failed = await client.request({ method: 'GET', url: '/fails', headers: {} });
    expect(failed.statusCode).toBe(409);
    expect(JSON.parse(bodyText(failed))).toMatchObject({ message: 'nope' });
    const echoed = await client.request({ method: 'POST', url: '/echo?x=1', headers: { 'X-Castie-User-Id': 'u1' }, body: { a: 'b' } });
    expect(JSON.parse(bodyText(echoed))).toEqual({ status: 200, got: { a: 'b' }, ip: '127.0.0.1', method: 'POST', url: '/echo?x=1', user: 'u1' });
  });

  it('collects a streamed answer whole', async () => {
    const res = await client.request({ method: 'GET', url: '/streamed', headers: {} });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(bodyText(res)).toBe('a,b\n1,2\nü,é\n');
  });

  it('leaves requests from anyone else (injected, or with its header forged) with their bytes', async () => {
    const direct = await app.inject({ method: 'GET', url: '/text' });
    expect(direct.payload).toBe(page);
    const forged = await app.inject({ method: 'GET', url: '/text', headers: { 'x-castie-in-process': 'guess' } });
    expect(forged.payload).toBe(page);
  });
});
