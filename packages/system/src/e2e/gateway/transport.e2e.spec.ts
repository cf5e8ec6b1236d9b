import { ErrorBodySchema } from '@castie/contracts';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestSystem, type TestUser } from '../../testing/harness.ts';

// Bad bodies and transport errors are 4xx in the envelope, and a path is read one way (hardening
// review, findings 4, 6 and 7).
let sys: TestSystem;
let ada: TestUser;
let port: number;

beforeAll(async () => {
  sys = await TestSystem.start();
  ada = await sys.signUp();
  await sys.system.gateway.listen({ port: 0, host: '127.0.0.1' });
  port = (sys.system.gateway.server.address() as { port: number }).port;
});
afterAll(() => sys.close());

/** Sends raw bytes over a socket and returns the raw answer (the server closes: Connection: close or an error). */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer)).on('error', reject);
  });
}
const bodyOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as unknown;

describe('bad bodies are a 400 in the envelope, never a 500', () => {
  it('multipart/form-data without a boundary, on every kind of POST route, with or without credentials', async () => {
    for (const [url, user] of [['/api/signup/email/', undefined], ['/api/profile/edit/', ada], ['/api/casties/create/', ada]] as const) {
      const res = await sys.request('POST', url, { payload: 'email=x', headers: { 'content-type': 'multipart/form-data' }, ...(user ? { user } : {}) });
      expect(res.status, url).toBe(400);
      expect(ErrorBodySchema.parse(res.body)).toMatchObject({ error_type: 'missing_request_data' });
    }
  });

  it('JSON nested 5,000 levels deep', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const res = await sys.request('POST', '/api/signup/email/', { payload: `{"email":${deep}}`, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error_type: 'missing_request_data', error_message: expect.stringContaining('nested') });
    const authed = await sys.request('POST', '/api/preferences/', { user: ada, payload: `{"is_private":${deep}}`, headers: { 'content-type': 'application/json' } });
    expect(authed.status).toBe(400);
  });
});

describe('transport errors come in the envelope too', () => {
  it('oversized headers: 431 headers_too_large', async () => {
    const answer = await raw(`GET /api/groups/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(ErrorBodySchema.parse(bodyOf(answer))).toMatchObject({ status: 431, error_type: 'headers_too_large' });
  });

  it('malformed framing: 400 missing_request_data', async () => {
    const answer = await raw('GET /api/groups/ HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(ErrorBodySchema.parse(bodyOf(answer))).toMatchObject({ status: 400, error_type: 'missing_request_data' });
  });
});

describe('HEAD', () => {
  it('works wherever GET does: the same status and headers, no body', async () => {
    const head = await sys.request('HEAD', '/api/groups/', { user: ada });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(String(head.headers['content-type'])).toContain('application/json');
    expect((await sys.request('HEAD', '/api/groups/')).status).toBe(401);
    expect((await sys.request('HEAD', '/api/signup/email/')).status).toBe(400);
  });
});

describe('a path is read one way', () => {
  it('a . or .. segment, plain or percent-encoded, never routes (sent as is, like curl --path-as-is)', async () => {
    const auth = `Authorization: Basic ${Buffer.from(`${ada.email}:${ada.password}`).toString('base64')}`;
    const get = (path: string) => raw(`GET ${path} HTTP/1.1\r\nHost: x\r\n${auth}\r\nConnection: close\r\n\r\n`);
    for (const path of ['/api/profile/%2e%2e/groups/', '/api/profile/%2E%2E/groups/', '/api/profile/./groups/', '/api/profile/../groups/', '/api/casties/%2e/', '/api/home/%2e%2e/groups/']) {
      const answer = await get(path);
      expect(answer, path).toMatch(/^HTTP\/1\.1 404 /);
      expect(bodyOf(answer)).toMatchObject({ error_type: 'not_found' });
    }
    expect(await get('/api/groups/')).toMatch(/^HTTP\/1\.1 200 /);
  });
});
