import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { handler as feedbackHandler } from '../../lambdas/handlers/receipt-feedback';
import { setDeps } from '../../lambdas/container';
import { RECEIPT_LEASE_MS, RECEIPT_RETRY } from '../../lambdas/domain/receipt';
import { ManualClock } from '../../lambdas/ports/clock';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import type { Mailer, OutgoingMail, ReceiptOutbox } from '../../lambdas/ports/receipts';
import { PermanentMailError } from '../../lambdas/ports/receipts';
import { withReceipts } from '../../lambdas/receipt-container';
import { deliverPaymentCallbacks } from '../../lambdas/use-cases/deliver-callbacks';
import { queueReceipt } from '../../lambdas/use-cases/queue-receipt';
import { sendDueReceipts, sendReceipt, type ReceiptDeps } from '../../lambdas/use-cases/receipts';
import { lambdaContext } from '../../local/lambda-context';
import { paidPayment } from '../support/payments';
import { startTestService, type TestService } from '../support/service';
import { asFunction, RECEIPT_FEEDBACK_ID } from '../support/table-access';

/**
 * E-mail receipts against the real engine (dynalite), every call checked against its function's
 * IAM grant: one receipt per payment however many deliveries race to queue it, a crash between
 * SES's answer and its record sending at most one more copy, a bounced address skipped afterwards,
 * a failing mailer tried a bounded number of times. The clock is moved, never waited on.
 */
const T0 = new Date('2030-03-02T09:00:00.000Z');
const clock = new ManualClock(T0);
const mailDir = mkdtempSync(join(tmpdir(), 'checkout-receipts-'));
let service: TestService;
let shop: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService({ clock, env: { RECEIPT_MAIL_DIR: mailDir } });
  shop = await service.createMerchant({ name: 'Receipt Shop', settings: { emailReceipts: true } });
});
afterAll(async () => {
  await service.close();
  rmSync(mailDir, { recursive: true, force: true });
});

/** A mailer that counts, and writes as the local runner's does (the mail folder of the service's configuration). */
function countingMailer(fail?: (n: number) => Error | undefined): Mailer & { sent: OutgoingMail[] } {
  const local = withReceipts(service.deps).mailer;
  const sent: OutgoingMail[] = [];
  return {
    sent,
    async send(mail) {
      const failure = fail?.(sent.length + 1);
      if (failure) throw failure;
      sent.push(mail);
      return local.send(mail);
    },
  };
}

const receiptDeps = (mailer: Mailer, receipts?: ReceiptOutbox): ReceiptDeps => ({ ...withReceipts(service.deps), mailer, ...(receipts ? { receipts } : {}), random: () => 0.5 });
const send = (deps: ReceiptDeps, paymentId: string) => asFunction('SendReceipts', () => sendReceipt(deps, paymentId));
const deliver = (paymentId: string) => asFunction('DeliverCallbacks', () => deliverPaymentCallbacks(service.deps, paymentId));
const receiptItems = async (paymentId: string) =>
  (await service.deps.db.send(new QueryCommand({ TableName: service.backend.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `RECEIPT#${paymentId}` }, ConsistentRead: true }))).Items ?? [];

test('a paid checkout queues one receipt however many deliveries and retries race, and one copy is sent', async () => {
  const paid = await paidPayment(service, shop);
  expect(paid.status.status).toBe('settled');
  const payment = (await service.deps.store.findPayment(paid.paymentId))!;
  const approval = payment.transactions.find((t) => t.status === 'success')!;
  const merchant = await service.deps.merchants.find(shop.merchant_key);

  // The relay's runs and the queueing itself, at once: one conditional put wins.
  const outcomes = await Promise.all([
    ...Array.from({ length: 4 }, () => deliver(paid.paymentId)),
    ...Array.from({ length: 8 }, () => asFunction('DeliverCallbacks', () => queueReceipt({ receipts: service.deps.receipts!, clock }, payment, approval, merchant))),
  ]);
  expect(outcomes.slice(4).filter((o) => o === 'queued').length).toBeLessThanOrEqual(1);
  expect(await receiptItems(paid.paymentId)).toHaveLength(1);

  const mailer = countingMailer();
  const deps = receiptDeps(mailer);
  const runs = await Promise.all(Array.from({ length: 3 }, () => asFunction('SendReceipts', () => sendDueReceipts(deps))));
  expect(runs.reduce((n, r) => n + r.sent, 0)).toBe(1);
  expect(mailer.sent.map((m) => [m.paymentId, m.to])).toEqual([[paid.paymentId, 'john@example.com']]);
  expect(await service.deps.receipts!.find(paid.paymentId)).toMatchObject({ state: 'sent', tries: 1, messageId: `local-${paid.paymentId}` });

  const html = readFileSync(join(mailDir, `${paid.paymentId}.html`), 'utf8');
  expect(html).toContain(paid.order.number);
  expect(html).toContain('ending in 1111');
  expect(html).not.toMatch(/4111\s?1111\s?1111\s?1111|411111/);

  // Later deliveries and runs find it sent: nothing more.
  clock.advance(RECEIPT_LEASE_MS * 2);
  await deliver(paid.paymentId);
  expect((await asFunction('SendReceipts', () => sendDueReceipts(deps))).examined).toBe(0);
  expect(mailer.sent).toHaveLength(1);
});

test('a crash after SES took the message and before its record sends it once more, when the lease ends, and no more', async () => {
  const paid = await paidPayment(service, shop);
  await deliver(paid.paymentId);
  const mailer = countingMailer();
  const outbox = service.deps.receipts!;
  let crashes = 1;
  // The process dies between the send and the guarded write of its end.
  const crashing: ReceiptOutbox = Object.assign(Object.create(outbox) as ReceiptOutbox, {
    end: (...args: Parameters<ReceiptOutbox['end']>) => (crashes-- > 0 ? Promise.reject(new Error('process killed')) : outbox.end(...args)),
  });
  await expect(send(receiptDeps(mailer, crashing), paid.paymentId)).rejects.toThrow('process killed');
  expect(mailer.sent).toHaveLength(1);

  // Before the lease ends nobody takes it over.
  expect(await send(receiptDeps(mailer), paid.paymentId)).toBe('busy');
  clock.advance(RECEIPT_LEASE_MS);
  expect(await send(receiptDeps(mailer), paid.paymentId)).toBe('sent');
  expect(mailer.sent).toHaveLength(2);
  expect(await service.deps.receipts!.find(paid.paymentId)).toMatchObject({ state: 'sent', tries: 2 });
  clock.advance(RECEIPT_LEASE_MS);
  expect(await send(receiptDeps(mailer), paid.paymentId)).toBe('busy');
  expect(mailer.sent).toHaveLength(2);
});

test('after a permanent bounce the address gets no more receipts; a transient bounce suppresses nothing', async () => {
  const bounce = (bounceType: string, emailAddress: string) => ({
    source: 'aws.ses',
    'detail-type': 'Email Bounced',
    detail: { eventType: 'Bounce', bounce: { bounceType, bouncedRecipients: [{ emailAddress }] }, mail: { tags: { 'ses:configuration-set': ['checkout-receipts'] } } },
  });
  setDeps(service.deps);
  const run = (event: unknown) => asFunction(RECEIPT_FEEDBACK_ID, () => feedbackHandler(event as never, lambdaContext(RECEIPT_FEEDBACK_ID, 30)));
  expect(await run(bounce('Transient', 'bounced@example.com'))).toEqual({ suppressed: 0 });
  const transient = await paidPayment(service, shop, { extra: { customer: { name: 'Bo Unce', email: 'bounced@example.com' } } });
  await deliver(transient.paymentId);
  const mailer = countingMailer();
  expect(await send(receiptDeps(mailer), transient.paymentId)).toBe('sent');

  expect(await run(bounce('Permanent', 'Bounced@EXAMPLE.com'))).toEqual({ suppressed: 1 });
  const later = await paidPayment(service, shop, { extra: { customer: { name: 'Bo Unce', email: 'bounced@example.com' } } });
  await deliver(later.paymentId);
  expect(await send(receiptDeps(mailer), later.paymentId)).toBe('suppressed');
  expect(mailer.sent).toHaveLength(1);
  expect(await service.deps.receipts!.find(later.paymentId)).toMatchObject({ state: 'skipped' });
  expect(existsSync(join(mailDir, `${later.paymentId}.html`))).toBe(false);
  // No address is kept for the suppression: its key is the digest.
  const items = await service.tableItems();
  expect(items.filter((i) => String(i.pk).startsWith('SUPPRESSION#')).map((i) => JSON.stringify(i))).toEqual([expect.not.stringContaining('bounced')]);
});

test('a mailer that keeps failing is tried a bounded number of times, a permanent refusal once', async () => {
  const paid = await paidPayment(service, shop);
  await deliver(paid.paymentId);
  const failing = countingMailer(() => Object.assign(new Error('throttled'), { name: 'TooManyRequestsException' }));
  const deps = receiptDeps(failing);
  const outcomes: string[] = [];
  for (let i = 0; i < RECEIPT_RETRY.tries; i++) {
    outcomes.push(await send(deps, paid.paymentId));
    clock.advance(RECEIPT_RETRY.maxDelayMs);
  }
  expect(outcomes).toEqual([...Array(RECEIPT_RETRY.tries - 1).fill('retrying'), 'failed']);
  expect(await service.deps.receipts!.find(paid.paymentId)).toMatchObject({ state: 'failed', tries: RECEIPT_RETRY.tries, lastError: expect.stringContaining('TooManyRequestsException') });

  const refused = await paidPayment(service, shop);
  await deliver(refused.paymentId);
  expect(await send(receiptDeps(countingMailer(() => new PermanentMailError('SES refused the message (BadRequestException)'))), refused.paymentId)).toBe('failed');
});

test('a merchant without receipts, or a payment without an e-mail, queues none', async () => {
  const quiet = await service.createMerchant({ name: 'Quiet Shop' });
  const paid = await paidPayment(service, quiet);
  await deliver(paid.paymentId);
  const anonymous = await paidPayment(service, shop, { extra: { customer: { name: 'No Mail' } } });
  await deliver(anonymous.paymentId);
  expect(await receiptItems(paid.paymentId)).toEqual([]);
  expect(await receiptItems(anonymous.paymentId)).toEqual([]);
});
