import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSmtpMailer } from './smtp-mailer.ts';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

describe('smtp mailer against an in-process SMTP server', () => {
  let server: SMTPServer;
  let port: number;
  let received: Received[];
  let refuse: boolean;

  beforeEach(async () => {
    received = [];
    refuse = false;
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo(address, _session, callback) {
        if (refuse) return callback(new Error('mailbox unavailable'));
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    server.listen(0, '127.0.0.1');
    await once(server.server, 'listening');
    port = (server.server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('delivers a password-reset mail with sender, recipient, subject, text and html', async () => {
    const mailer = createSmtpMailer({ url: `smtp://127.0.0.1:${port}`, from: 'Castie <no-reply@castie.test>' });
    await mailer.send({ to: 'ann@example.com', subject: 'Reset your password', text: 'Open http://x/password_reset/abc/', html: '<p>Open the link</p>' });
    await mailer.close();
    expect(received).toHaveLength(1);
    const [mail] = received;
    expect(mail!.from).toBe('no-reply@castie.test');
    expect(mail!.to).toEqual(['ann@example.com']);
    expect(mail!.raw).toMatch(/^Subject: Reset your password\r?$/m);
    expect(mail!.raw).toMatch(/^To: ann@example.com\r?$/m);
    expect(mail!.raw).toContain('Open http://x/password_reset/abc/');
    expect(mail!.raw).toContain('<p>Open the link</p>');
  });

  it('rejects when the server refuses the recipient', async () => {
    refuse = true;
    const mailer = createSmtpMailer({ url: `smtp://127.0.0.1:${port}`, from: 'no-reply@castie.test' });
    await expect(mailer.send({ to: 'nobody@example.com', subject: 's', text: 't' })).rejects.toThrow(/mailbox unavailable/);
    await mailer.close();
    expect(received).toEqual([]);
  });
});
