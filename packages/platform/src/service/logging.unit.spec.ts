import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { acceptedRequestId, loggerOptions, redactText } from './logging.ts';

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
    child.info({ mail: { to: 'ada@example.com', subject: 'Reset' }, password: 'p1', deep: { deeper: { token: 't1' } }, headers: { cookie: 'c=1' } }, 'mail');
    child.error({ err: new Error('no account for eve@example.net') }, 'failed');
    const text = lines.join('');
    for (const secret of ['tok123', 'QQ==', 'ada@example.com', '"p1"', 't1', 'c=1', 'eve@example.net']) expect(text, secret).not.toContain(secret);
    expect(text).toContain('/password_reset/[redacted]/');
    expect(text).toContain('"service":"identity"');
    // Requests are logged without their headers at all.
    expect(JSON.parse(lines[0]!).req).toEqual({ method: 'GET', url: '/password_reset/[redacted]/' });
  });
});
