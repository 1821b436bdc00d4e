import { ManualClock } from '../../lambdas/ports/clock';
import { ERRORS } from '../../lambdas/domain/errors';
import { SandboxLedgerStore, sandboxLedger } from '../../lambdas/adapters/sandbox-acquirer/ledger-store';
import { SANDBOX_CHARGEBACK_AFTER_MS } from '../../lambdas/adapters/sandbox-acquirer/rules';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { checkPayment } from '../support/ledger-checker';
import { captureOf, openSession, refundOf, statusOf, submitPage } from '../support/payments';
import { receivingMerchants, verifiesWith } from '../support/callback-receiver';
import { startTestService, type TestService } from '../support/service';
import { asFunction } from '../support/table-access';

/**
 * Chargebacks on the sandbox acquirer: raised at the sandbox (as `npm run -s sandbox -- chargeback`
 * does) or by the chargeback test card (09/38) a minute after its money settles, reported by the
 * sandbox's dispute report, recorded by the reconciler's next run, and sent to the merchant as the
 * platform's chargeback callback; the sandbox's own ledger agrees with ours, also under racing refunds.
 */
jest.setTimeout(60_000);

const T0 = new Date('2031-04-07T08:00:00.000Z');
const clock = new ManualClock(T0);
let service: TestService;
const merchants = receivingMerchants(() => service, 'Sandbox Dispute Shop');

beforeAll(async () => {
  service = await startTestService({ clock });
});
afterAll(async () => {
  await merchants.close();
  await service?.close();
});

const reconcile = () => asFunction('ReconcileAttempts', () => reconcileDue(service.deps));
const relay = () => runCallbackJob(service.deps);
const raise = (paymentId: string, amountMinor?: number, reason?: string) => service.deps.sandbox.raiseChargeback(paymentId, amountMinor, reason);

async function agrees(paymentId: string) {
  const payment = (await service.deps.store.findPayment(paymentId))!;
  expect(checkPayment(payment, await sandboxLedger(service.deps.db, service.backend.tableName, paymentId), { settled: true })).toEqual([]);
}

async function paid(card = '01/38', settings: Record<string, unknown> = {}) {
  const { shop, receiver } = await merchants.merchant(settings);
  const s = await openSession(service, shop, { order: { amount: '10.00', currency: 'USD' } });
  expect((await submitPage(service, s, { card })).status).toBeLessThan(400);
  return { shop, receiver, paymentId: s.paymentId };
}

it('a partial chargeback raised at the sandbox: recorded at the next reconcile run, a signed chargeback callback, the ledgers agree', async () => {
  const { shop, receiver, paymentId } = await paid();
  expect(await raise(paymentId, 400, '10.4')).toMatchObject({ raised: { amountMinor: 400, reasonCode: '10.4' } });
  expect((await statusOf(service, shop, paymentId)).status).toBe('settled');
  await reconcile();
  expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'chargeback', chargeback_amount: '4.00' });
  await relay();
  const cb = receiver.received.find((c) => c.fields.id === paymentId && c.fields.type === 'chargeback');
  expect(cb?.fields).toMatchObject({ order_status: 'chargeback', status: 'success', amount: '4.00', reason: '10.4' });
  expect(verifiesWith(cb!, shop.password)).toBe(true);
  await agrees(paymentId);
  // The report was taken: another run records nothing more.
  await reconcile();
  expect((await service.deps.store.findPayment(paymentId))!.transactions.filter((t) => t.type === 'chargeback')).toHaveLength(1);
  // A second dispute takes the rest; more than is left is refused with the platform's code.
  expect(await raise(paymentId, 700)).toEqual({ refused: 'CHARGEBACK_AMOUNT_TOO_BIG' });
  expect(ERRORS.CHARGEBACK_AMOUNT_TOO_BIG.code).toBe(208010);
  expect(await raise(paymentId)).toMatchObject({ raised: { amountMinor: 600 } });
  await reconcile();
  expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'chargeback', chargeback_amount: '10.00' });
  await agrees(paymentId);
});

it('the chargeback test card (09/38) is charged back in full a minute after it settles, by the reconciler\'s run then', async () => {
  const { shop, receiver, paymentId } = await paid('09/38');
  await reconcile();
  expect((await statusOf(service, shop, paymentId)).status).toBe('settled');
  clock.advance(SANDBOX_CHARGEBACK_AFTER_MS + 1_000);
  await reconcile();
  expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'chargeback', chargeback_amount: '10.00' });
  await relay();
  expect(receiver.received.filter((c) => c.fields.id === paymentId).map((c) => `${c.fields.type}:${c.fields.order_status}`)).toEqual(['sale:settled', 'chargeback:chargeback']);
  await agrees(paymentId);
});

it('in two-stage mode the test card is charged back a minute after its capture, of what was captured', async () => {
  const { shop, paymentId } = await paid('09/38', { dms: true });
  expect((await statusOf(service, shop, paymentId)).status).toBe('pending');
  expect((await captureOf(service, shop, paymentId, '8.00')).status).toBe(200);
  clock.advance(SANDBOX_CHARGEBACK_AFTER_MS + 1_000);
  await reconcile();
  expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'chargeback', chargeback_amount: '8.00' });
  await agrees(paymentId);
});

it('nothing captured, or all of it refunded: refused (208014); after a chargeback no refund is taken', async () => {
  const { shop, paymentId } = await paid('02/38');
  expect(await raise(paymentId)).toEqual({ refused: 'CHARGEBACK_NOT_SETTLED' });
  const refunded = await paid();
  expect((await refundOf(service, refunded.shop, refunded.paymentId, '10.00')).status).toBe(200);
  expect(await raise(refunded.paymentId)).toEqual({ refused: 'CHARGEBACK_NOT_SETTLED' });
  const charged = await paid();
  await raise(charged.paymentId, 100);
  await reconcile();
  expect((await refundOf(service, charged.shop, charged.paymentId, '1.00')).json).toMatchObject({ error_code: ERRORS.REFUND_NOT_ALLOWED.code });
  expect((await statusOf(service, shop, paymentId)).chargeback_amount).toBeUndefined();
});

it('chargebacks racing twenty concurrent refunds on one payment: whatever wins, ours equal the sandbox\'s ledger', async () => {
  for (let round = 0; round < 3; round++) {
    const { shop, paymentId } = await paid();
    const [refunds, chargebacks] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, () => refundOf(service, shop, paymentId, '0.75'))),
      Promise.all([raise(paymentId, 300), raise(paymentId, 300)]),
    ]);
    for (const r of refunds) expect([200, 409, 400]).toContain(r.status);
    expect(chargebacks.filter((c) => 'raised' in c).length + chargebacks.filter((c) => 'refused' in c).length).toBe(2);
    for (let i = 0; i < 4; i++) {
      clock.advance(121_000);
      await reconcile();
    }
    await agrees(paymentId);
    const stored = (await service.deps.store.findPayment(paymentId))!;
    expect((stored.refundedMinor ?? 0) + (stored.chargedBackMinor ?? 0)).toBeLessThanOrEqual(1000);
    expect(stored.status === 'chargeback').toBe((stored.chargedBackMinor ?? 0) > 0);
  }
});

it('news still comes through once more news than one report holds was taken: taken news stays in the report until its TTL, ahead of newer news', async () => {
  // Found by the money model after 579 runs: the report was read with a query Limit, which counts the
  // items read before the filter drops the taken ones, so 100 taken items hid every newer one.
  const report = new SandboxLedgerStore(service.deps.db, service.backend.tableName);
  const earlier = new Date(clock.now().getTime() - 60_000);
  for (let i = 0; i < 150; i++) await report.putNews(`pay_gone${String(i).padStart(3, '0')}`, earlier);
  // Taken by the reconciler's runs (news of payments we do not have is taken all the same).
  await reconcile();
  await reconcile();
  expect(await report.dueNews(clock.now(), 100)).toEqual([]);
  const { shop, paymentId } = await paid();
  await raise(paymentId, 250);
  expect(await report.dueNews(clock.now(), 100)).toEqual([expect.objectContaining({ paymentId })]);
  await reconcile();
  expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'chargeback', chargeback_amount: '2.50' });
  await agrees(paymentId);
});
