// Outgoing mail: one interface, a dev outbox and SMTP.

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** `log`: no mail leaves the machine (the dev mailer: stdout and DATA_DIR/outbox.log); `smtp`: a mail server. */
  readonly delivery: 'log' | 'smtp';
  /** Resolves once the message is handed over; rejects (within seconds, never hangs) on failure. */
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}
