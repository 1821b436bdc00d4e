import { ManualClock } from '../../lambdas/ports/clock';
import type { DaySearch } from '../../lambdas/ports/payments';
import type { DayFigure } from '../../lambdas/ports/disputes';
import { settledDayKey } from '../../lambdas/adapters/dynamodb/settled-days';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { checkChargebackRates, disputesOf, type DisputeDeps } from '../../lambdas/use-cases/admin/disputes';
import { adminApi, seedOperator, signIn, type AdminApi } from '../support/admin';
import { receivingMerchants } from '../support/callback-receiver';
import { captureOf, openSession, statusOf, submitPage } from '../support/payments';
import { startTestService, type TestService } from '../support/service';
import { asFunction } from '../support/table-access';

/**
 * The chargeback rate's denominator derived from the payments, not written by them (ADR 0043): a
 * merchant's month is its payments created that month whose money settled, whenever it settled;
 * only merchants charged back in the month are counted; a closed day is counted once and kept (its
 * payments that may still settle read again by id, nothing else); and a checkout writes no tally.
 */
jest.setTimeout(120_000);

const clock = new ManualClock(new Date('2031-01-30T10:00:00.000Z'));
let service: TestService;
let admin: AdminApi;
const merchants = receivingMerchants(() => service, 'Denominator Shop');

beforeAll(async () => {
  service = await startTestService({ clock, env: { CHARGEBACK_RATE_MIN_SETTLED: '1', CHARGEBACK_RATE_ALARM_PERCENT: '30' } });
  admin = adminApi(service, await signIn(service, await seedOperator(service)));
});
afterAll(async () => {
  await merchants.close();
  await service?.close();
});

const at = (iso: string) => clock.set(new Date(iso));
const reconcile = () => asFunction('ReconcileAttempts', () => reconcileDue(service.deps));

async function pay(shop: Awaited<ReturnType<typeof merchants.merchant>>['shop'], amount: string, currency = 'EUR'): Promise<string> {
  const s = await openSession(service, shop, { order: { amount, currency } });
  expect((await submitPage(service, s, { card: '01/38' })).status).toBeLessThan(400);
  return s.paymentId;
}

async function chargeBack(paymentId: string, amountMinor: number): Promise<void> {
  expect(await service.deps.sandbox.raiseChargeback(paymentId, amountMinor, '10.4')).toMatchObject({ raised: {} });
  await reconcile();
}

/** What the readings read of the payments (by merchant and day, by id) and which days they kept: the real stores, watched. */
const watched = { days: [] as string[], ids: [] as string[], kept: [] as string[] };
const reset = () => Object.values(watched).forEach((list) => list.splice(0));
const deps = (): DisputeDeps => ({
  ...service.deps,
  store: {
    paymentsOfDay: (q: DaySearch) => {
      watched.days.push(`${q.merchantKey} ${q.day}`);
      return service.deps.store.paymentsOfDay(q);
    },
    findPayments: (ids: readonly string[]) => {
      watched.ids.push(...ids);
      return service.deps.store.findPayments(ids);
    },
  },
  settledDays: {
    ofMonth: (merchantKey: string, month: string) => service.deps.settledDays.ofMonth(merchantKey, month),
    keep: (merchantKey: string, day: string, figure: DayFigure) => {
      watched.kept.push(`${merchantKey} ${day}`);
      return service.deps.settledDays.keep(merchantKey, day, figure);
    },
  },
});
const januaryOf = async (merchantKey: string) => (await disputesOf(deps(), { month: '2031-01', merchant: merchantKey })).rates.month;

it('counts a merchant\'s payments created in the month and settled, whenever settled; only merchants charged back are read; a closed day is counted once', async () => {
  const [{ shop: sales }, { shop: dms }, { shop: quiet }] = [await merchants.merchant(), await merchants.merchant({ dms: true }), await merchants.merchant()];

  // January 30: two sales; a DMS authorization captured the same day; a merchant never charged back pays too.
  const s1 = await pay(sales, '10.00');
  await pay(sales, '20.00');
  const d0 = await pay(dms, '60.00');
  expect((await captureOf(service, dms, d0, '60.00')).status).toBe(200);
  await pay(quiet, '99.00');
  // January 31: a sale in dollars; late in the day two DMS authorizations, the first captured only in February.
  at('2031-01-31T12:00:00.000Z');
  await pay(sales, '5.00', 'USD');
  await pay(quiet, '1.00');
  await chargeBack(s1, 400);
  await chargeBack(d0, 6000);
  at('2031-01-31T23:50:00.000Z');
  const d1 = await pay(dms, '30.00');
  const d2 = await pay(dms, '50.00');
  expect((await statusOf(service, dms, d1)).status).toBe('pending');

  // The hourly job on January 31, as its function (its calls checked against its grant): every day
  // of the month so far counted, each closed one kept, today not.
  reset();
  const report = await asFunction('CheckChargebackRates', () => checkChargebackRates(deps()));
  expect(report).toMatchObject({ month: '2031-01', merchants: 2, counting: [] });
  const january = Array.from({ length: 31 }, (_, i) => `2031-01-${String(i + 1).padStart(2, '0')}`);
  const daysOf = (merchantKey: string, days: readonly string[]) => days.map((d) => `${merchantKey} ${d}`);
  expect(watched.days.sort()).toEqual([...daysOf(dms.merchant_key, january), ...daysOf(sales.merchant_key, january)].sort());
  expect(watched.kept.sort()).toEqual([...daysOf(dms.merchant_key, january.slice(0, 30)), ...daysOf(sales.merchant_key, january.slice(0, 30))].sort());
  // A merchant without a chargeback costs no read of its payments, and nothing is kept of it.
  expect(watched.days.join()).not.toContain(quiet.merchant_key);
  expect((await service.tableItems()).filter((i) => String(i.pk).startsWith(`SETTLEDDAY#${quiet.merchant_key}`))).toEqual([]);
  const januaryNow = await januaryOf(sales.merchant_key);
  expect(januaryNow).toEqual([expect.objectContaining({ settledCount: 3, complete: true, chargebackCount: 1, amounts: [expect.objectContaining({ currency: 'EUR', settledMinor: 3000 }), expect.objectContaining({ currency: 'USD', settledMinor: 500 })] })]);
  expect(await januaryOf(dms.merchant_key)).toEqual([expect.objectContaining({ settledCount: 1, amounts: [expect.objectContaining({ currency: 'EUR', settledMinor: 6000 })] })]);

  // February 1: the authorization of January 31 is captured; a February sale and a February DMS payment, captured and charged back.
  at('2031-02-01T10:00:00.000Z');
  expect((await captureOf(service, dms, d1, '30.00')).status).toBe(200);
  await pay(sales, '40.00');
  const d3 = await pay(dms, '70.00');
  expect((await captureOf(service, dms, d3, '70.00')).status).toBe(200);
  await chargeBack(d3, 1000);

  // January read again: January 30 from what was kept (no read of its payments), January 31 (closed
  // now) counted once and kept, its authorization still uncaptured kept open. The capture of February
  // counts in January, the month the customer paid.
  reset();
  expect(await januaryOf(dms.merchant_key)).toEqual([expect.objectContaining({ settledCount: 2, complete: true, amounts: [expect.objectContaining({ currency: 'EUR', settledMinor: 9000 })] })]);
  expect(watched.days).toEqual([`${dms.merchant_key} 2031-01-31`]);
  expect(watched.kept).toEqual([`${dms.merchant_key} 2031-01-31`]);
  const kept = await service.deps.settledDays.ofMonth(dms.merchant_key, '2031-01');
  expect(kept.get('2031-01-31')).toEqual({ settledCount: 1, settledMinor: { EUR: 3000 }, open: [d2] });
  expect(kept.get('2031-01-30')).toEqual({ settledCount: 1, settledMinor: { EUR: 6000 }, open: [] });
  expect((await service.tableItems()).some((i) => i.pk === settledDayKey(dms.merchant_key, '2031-01-31').pk && i.sk === '2031-01-31')).toBe(true);

  // Once more: no day read, only the payment that may still settle, by id; nothing written.
  reset();
  expect(await januaryOf(dms.merchant_key)).toEqual([expect.objectContaining({ settledCount: 2 })]);
  expect(watched).toEqual({ days: [], ids: [d2], kept: [] });
  // It settles (February 2): read again, counted in January, kept with nothing open; after that January costs no read at all.
  at('2031-02-02T08:00:00.000Z');
  expect((await captureOf(service, dms, d2, '20.00')).status).toBe(200);
  reset();
  expect(await januaryOf(dms.merchant_key)).toEqual([expect.objectContaining({ settledCount: 3, amounts: [expect.objectContaining({ settledMinor: 11000 })] })]);
  expect(watched).toEqual({ days: [], ids: [d2], kept: [`${dms.merchant_key} 2031-01-31`] });
  // The sales merchant's January 31, closed since, is counted once now; then neither costs a read.
  reset();
  await januaryOf(sales.merchant_key);
  expect(watched).toEqual({ days: [`${sales.merchant_key} 2031-01-31`], ids: [], kept: [`${sales.merchant_key} 2031-01-31`] });
  reset();
  await januaryOf(dms.merchant_key);
  await januaryOf(sales.merchant_key);
  expect(watched).toEqual({ days: [], ids: [], kept: [] });

  // February (the job, on February 2): the DMS merchant's February is its February payment alone,
  // not January's authorization captured in February; the sales merchant has no February chargeback
  // (its sale of February is not read).
  reset();
  const february = await asFunction('CheckChargebackRates', () => checkChargebackRates(deps()));
  expect(february).toMatchObject({ month: '2031-02', merchants: 1, counting: [] });
  expect(new Set(watched.days.map((d) => d.split(' ')[0]))).toEqual(new Set([dms.merchant_key]));
  const rates = await disputesOf(deps(), { merchant: dms.merchant_key });
  expect(rates.rates.month).toEqual([expect.objectContaining({ merchantKey: dms.merchant_key, month: '2031-02', settledCount: 1, chargebackCount: 1, amounts: [expect.objectContaining({ settledMinor: 7000 })] })]);
  expect(rates.rates.previous).toEqual([expect.objectContaining({ month: '2031-01', settledCount: 3 })]);

  // The operators' page shows the same, through its own function and grant.
  const page = await admin.disputes({ month: '2031-01', merchant: dms.merchant_key });
  expect(page.status).toBe(200);
  expect(page.json.rates.month).toEqual([expect.objectContaining({ merchant_key: dms.merchant_key, settled_count: 3, settled_complete: true, chargeback_count: 1 })]);
});

it('a reading out of time answers a part count, never over the threshold; the next goes on from the days kept', async () => {
  at('2031-03-05T10:00:00.000Z');
  const { shop } = await merchants.merchant();
  const paid = [await pay(shop, '10.00'), await pay(shop, '10.00')];
  await chargeBack(paid[0]!, 1000);
  reset();
  const spent = await checkChargebackRates(deps(), { stopAt: Date.now() - 1 });
  expect(spent).toMatchObject({ month: '2031-03', highestPercent: 0, over: [], counting: [shop.merchant_key] });
  expect(watched.days).toEqual([]);
  // With time: March 1 to 4 counted and kept (no payments), today's two sales counted: 1 of 2 charged back.
  const done = await checkChargebackRates(deps());
  expect(done).toMatchObject({ counting: [], over: [{ merchantKey: shop.merchant_key, settledCount: 2, chargebackCount: 1, countRatePercent: 50 }] });
  expect(watched.kept).toEqual(['01', '02', '03', '04'].map((d) => `${shop.merchant_key} 2031-03-${d}`));
});

it('a checkout writes no tally: no TALLY# item and no call of any function names one', async () => {
  const { shop } = await merchants.merchant();
  const paymentId = await pay(shop, '12.00');
  expect((await statusOf(service, shop, paymentId)).status).toBe('settled');
  expect((await service.tableItems()).filter((i) => String(i.pk).startsWith('TALLY#'))).toEqual([]);
  expect(service.tableAccess.observed().filter((c) => (c.leadingKeys ?? []).some((k) => k.startsWith('TALLY#')))).toEqual([]);
  // The job's reads and its kept days, each allowed by its grant (close() fails the file on a refused call).
  expect(service.tableAccess.observed().filter((c) => c.fn === 'CheckChargebackRates').map((c) => `${c.action} ${c.index ?? (c.leadingKeys ?? [])[0]?.split('#')[0]}`).sort()).toEqual(
    expect.arrayContaining(['BatchGetItem PAYMENT', 'PutItem SETTLEDDAY', 'Query DISPUTE', 'Query SETTLEDDAY', 'Query searchKeys']),
  );
});
