/** The mail port: password-reset messages. Embedded: files in a local outbox; cluster: SMTP. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): Promise<void>;
}
