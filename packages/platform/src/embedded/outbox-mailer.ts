import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Mail, Mailer } from '../ports/mail.ts';

/** What the outbox tells its owner about each mail written (the service logs it). */
export interface OutboxMailInfo {
  file: string;
  to: string;
  subject: string;
}

/**
 * The embedded mailer: each mail is a JSON file `<timestamp>-<random>.json` in the outbox
 * directory, holding the mail and when it was written. Names sort in sending order. A file is
 * written under a dot-name and renamed, so readers that skip dot-files never see half a mail.
 */
export function createOutboxMailer({ dir, onSent }: { dir: string; onSent?: (info: OutboxMailInfo) => void }): Mailer {
  let lastStamp = 0;
  let ready: Promise<unknown> | null = null;
  return {
    async send(mail: Mail) {
      ready ??= mkdir(dir, { recursive: true });
      await ready;
      // Strictly increasing, so two mails in the same millisecond still sort in sending order.
      const stamp = (lastStamp = Math.max(Date.now(), lastStamp + 1));
      const name = `${stamp}-${randomBytes(4).toString('hex')}.json`;
      const body = { to: mail.to, subject: mail.subject, text: mail.text, ...(mail.html === undefined ? {} : { html: mail.html }), writtenAt: new Date(stamp).toISOString() };
      const temp = join(dir, `.${name}.tmp`);
      await writeFile(temp, `${JSON.stringify(body, null, 2)}\n`);
      await rename(temp, join(dir, name));
      onSent?.({ file: join(dir, name), to: mail.to, subject: mail.subject });
    },
    async close() {},
  };
}
