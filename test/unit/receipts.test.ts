import { receiptMail, receiptRows, receiptTexts } from '../../lambdas/checkout-page/receipt-mail';
import { renderState } from '../../lambdas/checkout-page/render';
import { PAGE_LANGUAGES } from '../../lambdas/checkout-page/texts';
import type { LinkPayment, Transaction } from '../../lambdas/domain/payment';
import { addressDigest, earnsReceipt, maskAddress, receiptAddress, receiptFactsOf, suppresses } from '../../lambdas/domain/receipt';
import { ManualClock } from '../../lambdas/ports/clock';
import type { Merchant } from '../../lambdas/ports/merchants';
import type { ReceiptOutbox, ReceiptRecord } from '../../lambdas/ports/receipts';
import { mailFeedbackOf } from '../../lambdas/protocol/mail-feedback';
import { migratedKeys } from '../../lambdas/adapters/dynamodb/index-migration';
import { LOCAL_SHARDS, SHARDS, shardOf } from '../../lambdas/adapters/dynamodb/keys';
import { queueReceipt } from '../../lambdas/use-cases/queue-receipt';

/** The e-mail receipt's rules: which payments get one, the address, the message, SES's feedback. */
const PAN = '4111111111111111';
const payment = {
  paymentId: '0b6f3c1e-5d7a-4e21-9a43-2f1c8d9e7a10',
  merchantKey: 'shop-1',
  status: 'settled',
  order: { number: 'A-1001', amountMinor: 1050, currency: 'EUR', amount: '10.50', description: 'Two books' },
  customer: { name: 'Jane Roe', email: ' Jane.Roe@Example.COM ' },
  createdAt: '2030-01-02T10:00:00.000Z',
  updatedAt: '2030-01-02T10:01:00.000Z',
  paidAt: '2030-01-02T10:01:00.000Z',
  card: { mask: '411111****1111', brand: 'visa', expMonth: 1, expYear: 2038 },
  checkout: { secretHash: 'x', operation: 'purchase', successUrl: 'https://shop.example/ok', reqToken: false, recurringInit: false, expiresAt: '2030-01-03T00:00:00.000Z', language: 'de' },
  transactions: [],
} as unknown as LinkPayment;
const merchant = { merchantKey: 'shop-1', name: 'Bücherstube <Süd>', emailReceipts: true } as Merchant;
const sale: Transaction = { transId: 't1', type: 'sale', status: 'success', amountMinor: 1050, at: '2030-01-02T10:01:00.000Z' };

describe('which transactions earn a receipt', () => {
  it.each([
    ['an approved sale on a link', payment, sale, true],
    ['an approved 3-D Secure attempt', payment, { ...sale, type: '3ds' }, true],
    ['an approved bank redirect', payment, { ...sale, type: 'redirect' }, true],
    ['a declined sale', payment, { ...sale, status: 'fail' }, false],
    ['a late approval kept for the ledger only', payment, { ...sale, internal: true }, false],
    ['a capture (the authorization had its receipt)', payment, { ...sale, type: 'capture' }, false],
    ['a refund', payment, { ...sale, type: 'refund' }, false],
    ['a merchant-initiated charge (no page)', { ...payment, checkout: undefined }, { ...sale, type: 'recurring' }, false],
  ] as const)('%s: %s', (_, p, tx, earns) => {
    expect(earnsReceipt(p as LinkPayment, tx as Transaction)).toBe(earns);
  });
});

describe('the address', () => {
  it.each([
    [' Jane.Roe@Example.COM ', 'Jane.Roe@example.com'],
    ['a@b.co', 'a@b.co'],
    ['no-at-sign', undefined],
    ['two@@example.com', undefined],
    ['x@y', undefined],
    ['evil@example.com\r\nBcc: all@example.com', undefined],
    ['"Name" <a@example.com>', undefined],
    [`${'a'.repeat(250)}@example.com`, undefined],
    [undefined, undefined],
  ])('%j is sent to as %j', (given, sent) => {
    expect(receiptAddress(given)).toBe(sent);
  });

  it('is masked in logs to its first character and domain', () => {
    expect(maskAddress('Jane.Roe@example.com')).toBe('J***@example.com');
    expect(maskAddress('@example.com')).toBe('***');
  });

  it('is suppressed by a digest that ignores case and spaces', () => {
    expect(addressDigest(' JANE.roe@EXAMPLE.com')).toBe(addressDigest('jane.roe@example.com'));
    expect(addressDigest('jane.roe@example.com')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('the message', () => {
  const facts = receiptFactsOf(payment, merchant.name, sale);

  it('has the page receipt\'s rows, from the page\'s texts in each of its languages', () => {
    for (const [code, texts] of Object.entries(PAGE_LANGUAGES)) {
      const page = renderState({ kind: 'paid', payment, merchant }, { nonce: 'n', texts });
      const pageRows = [...page.matchAll(/<dt>([^<]*)<\/dt><dd[^>]*>([^<]*)<\/dd>/g)].map((m) => [m[1], m[2]]);
      const esc = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
      expect(receiptRows(facts, receiptTexts(code)).map(([term, value]) => [esc(term), esc(value)])).toEqual(pageRows);
    }
  });

  it('is written in the payment\'s language, English when the page has none of it', () => {
    expect(receiptMail(facts, 'de')).toMatchObject({ language: 'de', subject: `${PAGE_LANGUAGES.de!.receipt.title}: Bücherstube <Süd>` });
    expect(receiptMail(facts, 'AR').language).toBe('ar');
    expect(receiptMail(facts, 'ar').html).toContain('dir="rtl"');
    expect(receiptMail(facts, 'ja').language).toBe('en');
    expect(receiptMail(facts, undefined).language).toBe('en');
  });

  it('carries the last four digits only, and every value as text', () => {
    for (const code of Object.keys(PAGE_LANGUAGES)) {
      const mail = receiptMail(facts, code);
      for (const part of [mail.subject, mail.text, mail.html]) {
        expect(part).not.toContain(PAN);
        expect(part).not.toContain('411111');
      }
      expect(mail.text).toContain('1111');
      expect(mail.html).toContain('Bücherstube &lt;Süd&gt;');
      expect(mail.html).not.toContain('<Süd>');
    }
  });

  it('keeps the subject on one line', () => {
    expect(receiptMail({ ...facts, shop: 'Shop\r\nBcc: x@example.com' }, 'en').subject).toBe('Receipt: Shop Bcc: x@example.com');
  });
});

describe('queueing', () => {
  const queued: Omit<ReceiptRecord, 'state' | 'tries'>[] = [];
  const outbox = { queue: async (r: Omit<ReceiptRecord, 'state' | 'tries'>) => (queued.push(r), 'queued' as const) } as unknown as ReceiptOutbox;
  const deps = { receipts: outbox, clock: new ManualClock(new Date('2030-01-02T10:02:00.000Z')) };
  beforeEach(() => {
    queued.length = 0;
  });

  it.each([
    ['the merchant sends receipts', merchant, payment, 'queued'],
    ['the merchant does not', { ...merchant, emailReceipts: false }, payment, 'off'],
    ['the merchant left it unset', { ...merchant, emailReceipts: undefined }, payment, 'off'],
    ['the payment has no e-mail', merchant, { ...payment, customer: {} }, 'no-address'],
    ['the e-mail is not an address', merchant, { ...payment, customer: { email: 'nobody' } }, 'no-address'],
  ] as const)('when %s: %s', async (_, m, p, outcome) => {
    expect(await queueReceipt(deps, p as LinkPayment, sale, m)).toBe(outcome);
    expect(queued).toHaveLength(outcome === 'queued' ? 1 : 0);
  });

  it('keeps what the receipt shows, the card by its last four only', async () => {
    await queueReceipt(deps, payment, sale, merchant);
    expect(queued[0]).toEqual({
      paymentId: payment.paymentId,
      merchantKey: 'shop-1',
      to: 'Jane.Roe@example.com',
      language: 'de',
      queuedAt: '2030-01-02T10:02:00.000Z',
      facts: { shop: merchant.name, amountMinor: 1050, currency: 'EUR', paidAt: payment.paidAt, orderNumber: 'A-1001', paymentId: payment.paymentId, card: { brand: 'visa', last4: '1111' } },
    });
  });
});

describe('SES feedback', () => {
  const event = (detail: unknown) => ({ source: 'aws.ses', 'detail-type': 'Email Bounced', detail });
  it.each([
    ['a permanent bounce', { eventType: 'Bounce', bounce: { bounceType: 'Permanent', bouncedRecipients: [{ emailAddress: 'a@example.com' }] } }, { kind: 'bounce', permanent: true, recipients: ['a@example.com'] }, true],
    ['a transient bounce', { eventType: 'Bounce', bounce: { bounceType: 'Transient', bouncedRecipients: [{ emailAddress: 'a@example.com' }] } }, { kind: 'bounce', permanent: false, recipients: ['a@example.com'] }, false],
    ['a complaint', { eventType: 'Complaint', complaint: { complainedRecipients: [{ emailAddress: 'b@example.com' }, { emailAddress: 7 }] } }, { kind: 'complaint', recipients: ['b@example.com'] }, true],
  ])('%s', (_, detail, feedback, suppressing) => {
    const read = mailFeedbackOf(event(detail));
    expect(read).toEqual(feedback);
    expect(suppresses(read!)).toBe(suppressing);
  });

  it.each([[{ eventType: 'Delivery' }], [undefined], ['text']])('ignores %j', (detail) => {
    expect(mailFeedbackOf(event(detail))).toBeUndefined();
  });
});

test('a due receipt written under other shard counts moves to its payment\'s shard of the table\'s (migrate-indexes --reshard)', () => {
  const id = payment.paymentId;
  const item = { pk: `RECEIPT#${id}`, sk: 'RECEIPT', workPk: `receipt#${shardOf(id, SHARDS.work)}`, workSk: `2030-01-02T10:02:00.000Z#${id}` };
  const wanted = `receipt#${shardOf(id, LOCAL_SHARDS.work)}`;
  expect(migratedKeys(item, LOCAL_SHARDS)).toEqual(item.workPk === wanted ? undefined : { set: { workPk: wanted }, remove: [], unchanged: { workPk: item.workPk } });
  expect(migratedKeys({ ...item, workPk: wanted }, LOCAL_SHARDS)).toBeUndefined();
  expect(migratedKeys({ pk: `RECEIPT#${id}`, sk: 'RECEIPT', state: 'sent' }, LOCAL_SHARDS)).toBeUndefined();
});
