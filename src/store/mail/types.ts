// Outgoing mail: one interface, a dev outbox and SMTP.

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Resolves once the message is handed over; rejects (within seconds, never hangs) on failure. */
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}
