// SMTP mailer through nodemailer, with short timeouts so a dead server is an error within seconds.

import nodemailer, { type Transporter } from 'nodemailer';
import type { Mailer, MailMessage } from './types.js';

const CONNECT_TIMEOUT_MS = 5_000;
const SOCKET_TIMEOUT_MS = 10_000;

export class SmtpMailer implements Mailer {
  readonly delivery = 'smtp' as const;
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport({
      url,
      connectionTimeout: CONNECT_TIMEOUT_MS,
      greetingTimeout: CONNECT_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
      // nodemailer must never log message contents (they hold sign-in codes).
      logger: false,
      debug: false,
    });
    // A send's failure reaches its promise; an 'error' event without a listener would end the process.
    this.transport.on('error', () => {});
  }

  async send(message: MailMessage): Promise<void> {
    await this.transport.sendMail({
      from: this.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
    });
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}
