// Dev mailer (no SMTP_URL): prints each mail as one line on stdout and appends it to DATA_DIR/outbox.log.
// This is the delivery channel of the embedded set-up, so the line carries the code by design; it is
// written directly, not through the structured logger, which never sees codes.

import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../data-dir.js';
import type { Mailer, MailMessage } from './types.js';

export class DevMailer implements Mailer {
  readonly delivery = 'log' as const;
  constructor(
    private readonly outboxFile: string,
    private readonly from: string,
    private readonly write: (line: string) => void = (line) => process.stdout.write(line),
  ) {}

  async send(message: MailMessage): Promise<void> {
    const line = `${JSON.stringify({
      time: new Date().toISOString(),
      outbox: true,
      from: this.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
    })}\n`;
    await mkdir(dirname(this.outboxFile), { recursive: true, mode: PRIVATE_DIR_MODE });
    await appendFile(this.outboxFile, line, { mode: PRIVATE_FILE_MODE });
    this.write(line);
  }

  async close(): Promise<void> {}
}
