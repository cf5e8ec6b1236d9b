import nodemailer from 'nodemailer';
import type { Mail, Mailer } from '../ports/mail.ts';

export interface SmtpMailerOptions {
  /** e.g. `smtp://user:pass@mail.example.com:587` or `smtps://…:465` (nodemailer's URL form). */
  url: string;
  /** Sender of every mail, e.g. `Castie <no-reply@castie.example>`. */
  from: string;
}

/**
 * The mail port over SMTP with nodemailer: one transport, one SMTP message per `send`. A send
 * resolves once the SMTP server accepted the message; failures reject (the caller decides).
 */
export function createSmtpMailer({ url, from }: SmtpMailerOptions): Mailer {
  const transport = nodemailer.createTransport(url);
  return {
    async send(mail: Mail) {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text, ...(mail.html === undefined ? {} : { html: mail.html }) });
    },
    async close() {
      transport.close();
    },
  };
}
