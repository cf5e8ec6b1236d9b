import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOutboxMailer, type OutboxMailInfo } from './outbox-mailer.ts';

describe('outbox mailer', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'castie-outbox-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const readOutbox = async (dir: string) => {
    const files = (await readdir(dir)).sort();
    return { files, mails: await Promise.all(files.map(async (f) => JSON.parse(await readFile(join(dir, f), 'utf8')) as Record<string, unknown>)) };
  };

  it('writes each mail as a JSON file in the outbox, creating the directory', async () => {
    const dir = join(root, 'data', 'outbox');
    const mailer = createOutboxMailer({ dir });
    await mailer.send({ to: 'ann@example.com', subject: 'Reset your password', text: 'Open http://x/password_reset/abc/' });
    await mailer.send({ to: 'bob@example.com', subject: 'Hi', text: 'plain', html: '<p>html</p>' });
    const { files, mails } = await readOutbox(dir);
    expect(files).toHaveLength(2);
    for (const file of files) expect(file).toMatch(/^\d{13}-[0-9a-f]{8}\.json$/);
    expect(mails[0]).toMatchObject({ to: 'ann@example.com', subject: 'Reset your password', text: 'Open http://x/password_reset/abc/' });
    expect(mails[0]).not.toHaveProperty('html');
    expect(mails[1]).toMatchObject({ to: 'bob@example.com', subject: 'Hi', text: 'plain', html: '<p>html</p>' });
    expect(Number.isNaN(Date.parse(String(mails[0]!.writtenAt)))).toBe(false);
    await mailer.close();
  });

  it('names sort in sending order, even within one millisecond', async () => {
    const dir = join(root, 'outbox');
    const mailer = createOutboxMailer({ dir });
    for (let i = 0; i < 30; i++) await mailer.send({ to: `u${i}@example.com`, subject: 's', text: String(i) });
    const { mails } = await readOutbox(dir);
    expect(mails.map((m) => m.text)).toEqual(Array.from({ length: 30 }, (_, i) => String(i)));
  });

  it('tells onSent about each mail, after its file exists', async () => {
    const dir = join(root, 'outbox');
    const sent: Array<OutboxMailInfo & { existed: boolean }> = [];
    const mailer = createOutboxMailer({ dir, onSent: (info) => sent.push({ ...info, existed: existsSync(info.file) }) });
    await mailer.send({ to: 'ann@example.com', subject: 'Reset', text: 't' });
    const [file] = await readdir(dir);
    expect(sent).toEqual([{ file: join(dir, file!), to: 'ann@example.com', subject: 'Reset', existed: true }]);
  });

  it('leaves no temporary files when mails are sent concurrently', async () => {
    const dir = join(root, 'outbox');
    const mailer = createOutboxMailer({ dir });
    await Promise.all(Array.from({ length: 20 }, (_, i) => mailer.send({ to: `u${i}@example.com`, subject: 's', text: 't' })));
    const files = await readdir(dir);
    expect(files).toHaveLength(20);
    expect(files.every((f) => f.endsWith('.json') && !f.startsWith('.'))).toBe(true);
  });
});
