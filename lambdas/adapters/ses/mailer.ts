import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { boundedRequests, type RequestTimeouts } from '../aws/request-timeouts';
import { PermanentMailError, type Mailer, type OutgoingMail } from '../../ports/receipts';

/** SES refusals a retry cannot change: a malformed request (an address SES cannot parse). */
const PERMANENT = new Set(['BadRequestException']);

/**
 * Receipts through Amazon SES (API v2): from the stage's verified sender, in its configuration set
 * (lib/constructs/receipt-mail.ts), whose event destination reports bounces and complaints. Each
 * message is tagged with its payment, so feedback can be traced to it. SendEmail has no
 * idempotency key: the receipt job's lease and guarded end make a second copy possible only after a
 * crash between the send and its record (ADR 0037).
 */
export class SesMailer implements Mailer {
  constructor(
    private readonly ses: SESv2Client,
    private readonly from: string,
    private readonly configurationSet: string,
  ) {}

  async send(mail: OutgoingMail): Promise<{ messageId: string }> {
    try {
      const out = await this.ses.send(
        new SendEmailCommand({
          FromEmailAddress: this.from,
          Destination: { ToAddresses: [mail.to] },
          Content: {
            Simple: {
              Subject: { Data: mail.subject, Charset: 'UTF-8' },
              Body: { Text: { Data: mail.text, Charset: 'UTF-8' }, Html: { Data: mail.html, Charset: 'UTF-8' } },
            },
          },
          ConfigurationSetName: this.configurationSet,
          EmailTags: [{ Name: 'payment', Value: mail.paymentId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 256) }],
        }),
      );
      return { messageId: out.MessageId ?? '' };
    } catch (e) {
      const name = (e as Error).name;
      // SES's own message may quote the address: never carried on.
      if (PERMANENT.has(name)) throw new PermanentMailError(`SES refused the message (${name})`);
      const failure = new Error(`SES did not take the message (${name})`);
      failure.name = name || 'Error';
      throw failure;
    }
  }
}

/** One SES call's limits: three tries end well within the receipt lease (RECEIPT_LEASE_MS). */
export const SES_TIMEOUTS: RequestTimeouts = { connectionTimeoutMs: 3_000, requestTimeoutMs: 10_000 };

/** One client per process. */
export const createSesClient = (timeouts: RequestTimeouts = SES_TIMEOUTS): SESv2Client => new SESv2Client({ maxAttempts: 3, requestHandler: boundedRequests(timeouts) });
