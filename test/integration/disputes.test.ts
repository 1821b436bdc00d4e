import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ManualClock } from '../../lambdas/ports/clock';
import { key } from '../../lambdas/adapters/dynamodb/keys';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { checkChargebackRates } from '../../lambdas/use-cases/admin/disputes';
import { DISPUTE_COLUMNS } from '../../lambdas/protocol/admin/disputes';
import { adminApi, seedOperator, signIn, type AdminApi } from '../support/admin';
import { captureOf, openSession, submitPage } from '../support/payments';
import { receivingMerchants } from '../support/callback-receiver';
import { startTestService, type TestService } from '../support/service';
import { asFunction } from '../support/table-access';

/**
 * The operators' disputes view (GET /admin/api/disputes, its CSV export) and the chargeback-rate
 * job: each chargeback the acquirer reports is listed once with its reason code, dates, amount and
 * outcome; each merchant charged back in a month is rated: its chargebacks over its payments created
 * that month whose money settled (sales, recurring charges, captures), by count and per currency by
 * amount (chargeback-denominator.test.ts holds how that is counted).
 */
jest.setTimeout(60_000);

const T0 = new Date('2031-05-30T08:00:00.000Z');
const clock = new ManualClock(T0);
let service: TestService;
let admin: AdminApi;
let viewer: AdminApi;
const merchants = receivingMerchants(() => service, 'Dispute View Shop');

beforeAll(async () => {
  // A month counts from its third settled payment here (100 by default).
  service = await startTestService({ clock, env: { CHARGEBACK_RATE_MIN_SETTLED: '3', CHARGEBACK_RATE_ALARM_PERCENT: '30' } });
  admin = adminApi(service, await signIn(service, await seedOperator(service)));
  viewer = adminApi(service, await signIn(service, await seedOperator(service, undefined, undefined, 'viewer')));
});
afterAll(async () => {
  await merchants.close();
  await service?.close();
});

const reconcile = () => asFunction('ReconcileAttempts', () => reconcileDue(service.deps));
const raise = (paymentId: string, amountMinor?: number, reason?: string) => service.deps.sandbox.raiseChargeback(paymentId, amountMinor, reason);

async function pay(shop: Awaited<ReturnType<typeof merchants.merchant>>['shop'], amount: string, currency = 'EUR', card = '01/38') {
  const s = await openSession(service, shop, { order: { amount, currency } });
  expect((await submitPage(service, s, { card })).status).toBeLessThan(400);
  return s.paymentId;
}

it('lists each chargeback once with its reason, dates, amount and outcome, and rates each merchant by count and amount over what settled', async () => {
  const { shop: a } = await merchants.merchant();
  const { shop: b } = await merchants.merchant({ dms: true });
  // A: four sales (two currencies); B: two authorizations, one captured in part.
  const [a1, a2] = [await pay(a, '10.00'), await pay(a, '20.00')];
  await pay(a, '30.00');
  await pay(a, '5.00', 'USD');
  const [b1] = [await pay(b, '50.00'), await pay(b, '60.00')];
  expect((await captureOf(service, b, b1!, '40.00')).status).toBe(200);

  expect(await raise(a1!, 400, '10.4')).toMatchObject({ raised: { amountMinor: 400 } });
  expect(await raise(a2!, undefined, '4837')).toMatchObject({ raised: { amountMinor: 2000 } });
  expect(await raise(b1!, 4000, '13.1')).toMatchObject({ raised: { amountMinor: 4000 } });
  await reconcile();
  // Read again (another news, a scheduled check): still one entry each.
  await reconcile();

  const month = T0.toISOString().slice(0, 7);
  const r = await admin.disputes({ month });
  expect(r.status).toBe(200);
  const mine = r.json.chargebacks.filter((c) => [a1, a2, b1].includes(c.payment_id));
  expect(mine).toHaveLength(3);
  expect(mine.find((c) => c.payment_id === a1)).toMatchObject({ trans_id: `${a1}.cb1`, merchant_key: a.merchant_key, amount: '4.00', currency: 'EUR', reason_code: '10.4', outcome: 'recorded', chargeback_date: T0.toISOString().slice(0, 10) });
  expect(mine.find((c) => c.payment_id === b1)).toMatchObject({ amount: '40.00', reason_code: '13.1' });

  const rateOf = (merchantKey: string) => r.json.rates.month.find((x) => x.merchant_key === merchantKey);
  // A: 2 of 4 settled payments charged back (50 %, over 30 % with 3 or more settled); 24.00 of 60.00 EUR, none of 5.00 USD.
  expect(rateOf(a.merchant_key)).toMatchObject({
    settled_count: 4,
    chargeback_count: 2,
    count_rate_percent: 50,
    over_threshold: true,
    amounts: [
      { currency: 'EUR', settled_amount: '60.00', chargeback_amount: '24.00', rate_percent: 40 },
      { currency: 'USD', settled_amount: '5.00', chargeback_amount: '0.00', rate_percent: 0 },
    ],
  });
  // B: one capture settled (the other authorization settles nothing): 1 of 1, but too few payments to count.
  expect(rateOf(b.merchant_key)).toMatchObject({ settled_count: 1, chargeback_count: 1, count_rate_percent: 100, over_threshold: false, amounts: [{ currency: 'EUR', settled_amount: '40.00', chargeback_amount: '40.00' }] });
  expect(r.json).toMatchObject({ month, previous_month: '2031-04', threshold_percent: 30, min_settled: 3 });

  // Filters: a merchant (by name or key), a reason code, an outcome.
  expect((await admin.disputes({ month, merchant: b.merchant_key })).json.chargebacks.map((c) => c.payment_id)).toEqual([b1]);
  expect((await admin.disputes({ month, merchant: b.merchant_key })).json.rates.month.map((x) => x.merchant_key)).toEqual([b.merchant_key]);
  expect((await admin.disputes({ month, reason: '4837' })).json.chargebacks.map((c) => c.payment_id)).toEqual([a2]);
  expect((await admin.disputes({ month, outcome: 'refused', merchant: a.merchant_key })).json.chargebacks).toEqual([]);

  // The hourly job: the highest rate that counts is A's, and A is named.
  const report = await checkChargebackRates(service.deps);
  expect(report.highestPercent).toBeGreaterThanOrEqual(50);
  expect(report.over.map((o) => o.merchantKey)).toContain(a.merchant_key);
  expect(report.over.map((o) => o.merchantKey)).not.toContain(b.merchant_key);

  // A viewer reads the view and its export; the export is the filtered list as CSV.
  const csv = await viewer.exportDisputes({ month, merchant: a.merchant_key });
  expect(csv.status).toBe(200);
  expect(csv.headers['content-type']).toMatch(/^text\/csv/);
  expect(csv.headers['content-disposition']).toBe(`attachment; filename="chargebacks-${month}.csv"`);
  const lines = csv.text.replace(/^\uFEFF/, '').trimEnd().split('\r\n');
  expect(lines[0]).toBe(DISPUTE_COLUMNS.join(','));
  expect(lines).toHaveLength(3);
  expect(lines.slice(1).join('\n')).toContain(`${a2}.cb1,${a2},${a.merchant_key}`);
});

it('a chargeback our records cannot take is listed as refused, with the refusal, and still counts in the rate', async () => {
  const { shop } = await merchants.merchant();
  const paymentId = await pay(shop, '10.00');
  // Our records diverge from the acquirer's: they say 8.00 was refunded, which the acquirer never did.
  await service.deps.db.send(new UpdateCommand({ TableName: service.backend.tableName, Key: key.payment(paymentId), UpdateExpression: 'SET refundedMinor = :r', ExpressionAttributeValues: { ':r': 800 } }));
  expect(await raise(paymentId, 500, '4853')).toMatchObject({ raised: { amountMinor: 500 } });
  await reconcile();
  const r = await admin.disputes({ merchant: shop.merchant_key });
  expect(r.json.chargebacks).toEqual([expect.objectContaining({ trans_id: `${paymentId}.cb1`, outcome: 'refused', refusal: 'CHARGEBACK_AMOUNT_TOO_BIG', amount: '5.00', reason_code: '4853' })]);
  expect(r.json.rates.month).toEqual([expect.objectContaining({ merchant_key: shop.merchant_key, settled_count: 1, chargeback_count: 1 })]);
  expect((await admin.disputes({ merchant: shop.merchant_key, outcome: 'refused' })).json.chargebacks).toHaveLength(1);
});

it('a month is read as asked: the month before has its own chargebacks and rates; a malformed month or outcome is a 400 with the envelope', async () => {
  const { shop } = await merchants.merchant();
  const paymentId = await pay(shop, '10.00');
  expect(await raise(paymentId, 1000, '10.4')).toMatchObject({ raised: {} });
  await reconcile();
  clock.set(new Date('2031-06-02T09:00:00.000Z'));
  // Now (June) the view opens on June; May is the month before, with this chargeback.
  const june = await admin.disputes({ merchant: shop.merchant_key });
  expect(june.json).toMatchObject({ month: '2031-06', previous_month: '2031-05', chargebacks: [] });
  expect(june.json.rates.previous).toEqual([expect.objectContaining({ merchant_key: shop.merchant_key, month: '2031-05', settled_count: 1, chargeback_count: 1 })]);
  expect(june.json.rates.month).toEqual([]);
  const may = await admin.disputes({ merchant: shop.merchant_key, month: '2031-05' });
  expect(may.json.chargebacks.map((c) => c.payment_id)).toEqual([paymentId]);

  for (const bad of [{ month: '2031-13' }, { month: 'May 2031' }, { month: '2031-5' }, { outcome: 'won' }]) {
    const refused = await admin.disputes(bad);
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ error_code: expect.any(Number), errors: [expect.objectContaining({ error_message: expect.any(String) })] });
  }
});
