import Fastify from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { acceptedRequestId, loggerOptions, OneLinePerRequest, redactText, requestLogger } from './logging.ts';

describe('request ids from outside', () => {
  it('accepts short ids of safe characters and nothing else', () => {
    for (const id of ['abc', 'req-1', 'a.b:c_d-E9', '0'.repeat(128), '5f0c6f9e-1c2b-4b8e-9d7a-3e2f1a0b9c8d']) expect(acceptedRequestId(id), id).toBe(id);
    for (const id of ['', '0'.repeat(129), 'two words', 'new\nline', 'quote"d', 'a/b', 'é', undefined, ['a', 'b'], 42]) expect(acceptedRequestId(id), JSON.stringify(id)).toBeNull();
  });
});

describe('redaction of log text', () => {
  it('censors reset-link tokens, secret query values, secret JSON fields and e-mail addresses', () => {
    expect(redactText('GET /password_reset/AbC-123_x/?next=1')).toBe('GET /password_reset/[redacted]/?next=1');
    expect(redactText('/api/x/?username=a%40b.co&password=s3cret&limit=5&token=t')).toBe('/api/x/?username=[redacted]&password=[redacted]&limit=5&token=[redacted]');
    expect(redactText('{"a":{"Password":"x\\"y","Authorization":"Basic QQ==","api-key":"k"},"ok":"yes"}')).toBe('{"a":{"Password":"[redacted]","Authorization":"[redacted]","api-key":"[redacted]"},"ok":"yes"}');
    expect(redactText('sent to ada.lovelace+test@mail.example.co.uk and bob%40example.org')).toBe('sent to [email] and [email]');
    expect(redactText('{"to":"o\'brien@example.ie"}')).toBe('{"to":"[email]"}');
    expect(redactText('nothing secret here: 3 events, 100%')).toBe('nothing secret here: 3 events, 100%');
  });

  it('every line a logger with loggerOptions writes is censored, in children and errors too', () => {
    const lines: string[] = [];
    const logger = pino(loggerOptions({ level: 'info' }), { write: (s: string) => void lines.push(s) });
    const child = logger.child({ service: 'identity' });
    child.info({ req: { method: 'GET', url: '/password_reset/tok123/', headers: { authorization: 'Basic QQ==' } } }, 'incoming request');
    // Secrets long enough not to turn up by chance elsewhere in a line (an error's stack holds the
    // checkout's path: a temporary directory named ...t1... failed the check of 't1').
    child.info({ mail: { to: 'ada@example.com', subject: 'Reset' }, password: 'pass-81f3', deep: { deeper: { token: 'deep-token-81f3' } }, headers: { cookie: 'c=cookie-81f3' } }, 'mail');
    child.error({ err: new Error('no account for eve@example.net') }, 'failed');
    const text = lines.join('');
    for (const secret of ['tok123', 'QQ==', 'ada@example.com', 'pass-81f3', 'deep-token-81f3', 'cookie-81f3', 'eve@example.net']) expect(text, secret).not.toContain(secret);
    expect(text).toContain('/password_reset/[redacted]/');
    expect(text).toContain('"service":"identity"');
    // Requests are logged without their headers at all.
    expect(JSON.parse(lines[0]!).req).toEqual({ method: 'GET', url: '/password_reset/[redacted]/' });
  });
});

describe('request lines', () => {
  /** A bare app as the services and the gateway log: one line per request, request loggers made on demand. */
  async function loggedApp() {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(loggerOptions({ level: 'info' }), { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) }).child({ service: 'casties' });
    const app = Fastify({ loggerInstance: logger, logController: new OneLinePerRequest(), childLoggerFactory: requestLogger });
    app.get('/quiet', async () => ({ ok: true }));
    app.get('/chatty', async (request) => {
      request.log.info({ password: 'p1', user: 'ada@example.com' }, 'looking');
      request.log.debug('not written at info');
      return { ok: true };
    });
    app.get('/probe', { logLevel: 'warn' }, async (request) => {
      request.log.info('not written at warn');
      request.log.warn('written at warn');
      return { ok: true };
    });
    app.get('/broken', async () => {
      throw new Error('broken for eve@example.net');
    });
    await app.ready();
    return { app, lines };
  }

  it('writes one censored line per request, with its request id, status and time', async () => {
    const { app, lines } = await loggedApp();
    const res = await app.inject({ method: 'GET', url: '/quiet?token=s3cret&limit=5', headers: { host: 'ada@example.com' } });
    expect(res.statusCode).toBe(200);
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({ level: 30, service: 'casties', reqId: expect.any(String), msg: 'request completed', res: { statusCode: 200 } });
    expect(line!.req).toMatchObject({ method: 'GET', url: '/quiet?token=[redacted]&limit=5', host: '[email]' });
    expect(typeof line!.responseTime).toBe('number');
    await app.close();
  });

  it("gives a request's own lines its id, at the route's level, with secrets censored", async () => {
    const { app, lines } = await loggedApp();
    await app.inject({ method: 'GET', url: '/chatty' });
    await app.inject({ method: 'GET', url: '/probe' });
    await app.inject({ method: 'GET', url: '/broken' });
    const text = JSON.stringify(lines);
    for (const secret of ['p1', 'ada@example.com', 'eve@example.net', 'not written']) expect(text, secret).not.toContain(secret);
    expect(lines.map((l) => [l.msg, l.level])).toEqual([
      ['looking', 30],
      ['request completed', 30],
      ['written at warn', 40],
      ['request completed', 30],
      // Fastify's own error handler (the apps install theirs) logs the error, censored.
      ['broken for [email]', 50],
      ['request completed', 30],
    ]);
    // Each request's lines carry one id, another than the other requests'.
    const ids = lines.map((l) => l.reqId);
    expect(ids.every((id) => typeof id === 'string')).toBe(true);
    expect(ids[0]).toBe(ids[1]);
    expect(ids[2]).toBe(ids[3]);
    expect(ids[4]).toBe(ids[5]);
    expect(new Set(ids).size).toBe(3);
    await app.close();
  });
});
