import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { FileMailer } from './adapters/local/file-mailer';
import { DynamoMailSuppressions, DynamoReceiptOutbox } from './adapters/dynamodb/receipt-outbox';
import { shardCountsOf } from './adapters/dynamodb/keys';
import { createSesClient, SesMailer } from './adapters/ses/mailer';
import type { Config } from './config';
import type { Deps } from './container';
import type { Mailer, MailSuppressions, ReceiptOutbox } from './ports/receipts';

/**
 * What sending receipts needs beyond the common dependencies: the outbox, the suppression list and
 * the mailer (SES, or the local runner's folder). Imported only by the receipt job, so no other
 * function bundles the SES client.
 */
export interface ReceiptParts {
  readonly receipts: ReceiptOutbox;
  readonly suppressions: MailSuppressions;
  readonly mailer: Mailer;
  /** Jitter of retry delays. */
  readonly random: () => number;
}

/** The mailer the configuration names; refuses to start without one (a stage without receipts has no receipt job). */
export function mailerOf(config: Pick<Config, 'RECEIPT_MAIL_DIR' | 'RECEIPT_SENDER' | 'RECEIPT_CONFIGURATION_SET'>): Mailer {
  if (config.RECEIPT_MAIL_DIR) return new FileMailer(config.RECEIPT_MAIL_DIR);
  if (config.RECEIPT_SENDER && config.RECEIPT_CONFIGURATION_SET) return new SesMailer(createSesClient(), config.RECEIPT_SENDER, config.RECEIPT_CONFIGURATION_SET);
  throw new Error('Invalid configuration: RECEIPT_SENDER and RECEIPT_CONFIGURATION_SET (AWS), or RECEIPT_MAIL_DIR (local), must say how receipts are sent');
}

const built = new WeakMap<DynamoDBDocumentClient, ReceiptParts>();

/**
 * The dependencies with their receipt parts: those given win (the local runner's announcing mailer,
 * the tests' failing ones), the others built once per process from the configuration.
 */
export function withReceipts<D extends Pick<Deps, 'config' | 'db'> & Partial<ReceiptParts>>(base: D): D & ReceiptParts {
  let parts = built.get(base.db);
  if (!parts) {
    parts = {
      receipts: base.receipts ?? new DynamoReceiptOutbox(base.db, base.config.TABLE_NAME, shardCountsOf(base.config.TABLE_SHARDS)),
      suppressions: base.suppressions ?? new DynamoMailSuppressions(base.db, base.config.TABLE_NAME),
      mailer: base.mailer ?? mailerOf(base.config),
      random: base.random ?? Math.random,
    };
    built.set(base.db, parts);
  }
  return { ...parts, ...base } as D & ReceiptParts;
}
