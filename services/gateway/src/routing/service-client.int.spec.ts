import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient } from './service-client.ts';

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
