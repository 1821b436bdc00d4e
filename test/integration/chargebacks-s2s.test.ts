import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ManualClock } from '../../lambdas/ports/clock';
import { key } from '../../lambdas/adapters/dynamodb/keys';
import { ERRORS } from '../../lambdas/domain/errors';
import { transactionHash } from '../../lambdas/adapters/s2s-card/hash';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { checkAgainstGateway } from '../support/ledger-checker';
import { openSession, refundOf, statusOf, submitPage } from '../support/payments';
import { receivingMerchants, verifiesWith } from '../support/callback-receiver';
import { startFakeGateway, type FakeGateway } from '../support/s2s-card-gateway';
import { startTestService, type TestService } from '../support/service';
import { asFunction } from '../support/table-access';
import { insideVoidWindow } from '../support/void-window';
import { until } from '../support/until';

/**
 * Chargebacks over the S2S CARD connector: the gateway charges a settled payment back and sends its
 * CHARGEBACK callback; the callback (verified: hash and trans_id) is only news, the payment's
 * chargebacks are read from the gateway (GET_TRANS_DETAILS) by the reconciler and recorded once each;
 * the merchant gets the platform's chargeback callback, signed; status and ledger agree with the
 * gateway's, also when a refund races the chargeback and when callbacks are repeated or forged.
 */
jest.setTimeout(60_000);

let gateway: FakeGateway;
let service: TestService;
const clock = new ManualClock(insideVoidWindow());
const merchants = receivingMerchants(() => service, 'Dispute Shop');

beforeAll(async () => {
  gateway = await startFakeGateway();
  service = await startTestService({
    clock,
    env: { ACQUIRER: 's2s-card', S2S_CARD_URL: gateway.url, S2S_CARD_CLIENT_KEY: gateway.clientKey, S2S_CARD_PASSWORD: gateway.password, S2S_CARD_TIMEOUT_MS: '2000', S2S_CARD_FOLLOW_UP_WAIT_MS: '1500' },
  });
  gateway.notifyUrl = `${service.baseUrl}/acquirer/s2s-card/notify`;
});
afterAll(async () => {
  await merchants.close();
  await gateway?.close();
  await service?.close();
});

const reconcile = () => asFunction('ReconcileAttempts', () => reconcileDue(service.deps));
const relay = () => runCallbackJob(service.deps);
const form = (fields: Record<string, string>) => ({ path: '/acquirer/s2s-card/notify', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });

/** A paid payment (EUR 10.00) of a merchant with its own callback receiver. */
async function paid() {
  const { shop, receiver } = await merchants.merchant();
  const s = await openSession(service, shop, {
    order: { currency: 'EUR', amount: '10.00' },
    extra: { customer: { name: 'Jane Roe', email: 'jane.roe@example.com' }, billing_address: { country: 'DE', city: 'Berlin', address: 'Street 1', zip: '10115' } },
  });
  expect((await submitPage(service, s, { card: '01/38' })).status).toBeLessThan(400);
  const t = gateway.byOrder(`${s.paymentId}.1`)!;
  expect(t.status).toBe('SETTLED');
  return { shop, receiver, paymentId: s.paymentId, t };
}

/** Waits until the gateway's callbacks for this transaction of this action have all been answered. */
async function callbacksAnswered(transId: string, action: string, count = 1) {
  if (await until(() => gateway.callbacks.filter((c) => c.fields.trans_id === transId && c.fields.action === action).length >= count, { everyMs: 10 })) return;
  throw new Error(`no ${action} callback answered for ${transId}`);
}

async function ledgerAgrees(paymentId: string) {
  const payment = (await service.deps.store.findPayment(paymentId))!;
  expect(checkAgainstGateway(payment, gateway.ledgerOf(paymentId), { settled: true })).toEqual([]);
}

it('a full chargeback: the callback is answered OK, the reconciler records it from the gateway, the merchant gets a signed chargeback callback', async () => {
  const { shop, receiver, paymentId, t } = await paid();
  expect(gateway.chargeback(t.transId, undefined, '10.4')).toEqual({ ok: true, amountMinor: 1000 });
  await callbacksAnswered(t.transId, 'CHARGEBACK');
  expect(gateway.callbacks.find((c) => c.fields.action === 'CHARGEBACK' && c.fields.trans_id === t.transId)?.answer).toBe('OK');
  // Noted, not yet recorded: the callback's own fields change nothing.
  expect((await statusOf(service, shop, paymentId)).status).toBe('settled');
  expect(await reconcile()).toMatchObject({ settled: 1 });
  expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'chargeback', chargeback_amount: '10.00' });
  const stored = (await service.deps.store.findPayment(paymentId))!;
  expect(stored.transactions.filter((x) => x.type === 'chargeback')).toEqual([
    expect.objectContaining({ transId: `${paymentId}.cb1`, status: 'success', amountMinor: 1000, reason: '10.4', dispute: { reasonCode: '10.4', chargebackDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), bankDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) } }),
  ]);
  await relay();
  const cb = receiver.received.find((c) => c.fields.id === paymentId && c.fields.type === 'chargeback');
  expect(cb?.fields).toMatchObject({ type: 'chargeback', status: 'success', order_status: 'chargeback', amount: '10.00', reason: '10.4', trans_id: `${paymentId}.cb1` });
  expect(verifiesWith(cb!, shop.password)).toBe(true);
  await ledgerAgrees(paymentId);
  // Nothing more to take: no refund, no void.
  const refund = await refundOf(service, shop, paymentId, '1.00');
  expect([refund.status, refund.json]).toEqual([409, { error_code: ERRORS.REFUND_NOT_ALLOWED.code, error_message: ERRORS.REFUND_NOT_ALLOWED.message, errors: [] }]);
});

it('partial chargebacks, one notification repeated three times and one replayed later: each recorded once, the total the gateway\'s', async () => {
  const { shop, paymentId, t } = await paid();
  gateway.adversity.callbacks.repeat = 1;
  try {
    expect(gateway.chargeback(t.transId, 300)).toMatchObject({ ok: true });
    await callbacksAnswered(t.transId, 'CHARGEBACK', 4);
  } finally {
    gateway.adversity.callbacks.repeat = 0;
  }
  // Several reconcile runs at once, as overlapping job invocations would.
  await Promise.all([reconcile(), reconcile(), reconcile()]);
  expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'chargeback', chargeback_amount: '3.00' });
  expect(gateway.chargeback(t.transId, 200)).toMatchObject({ ok: true });
  await callbacksAnswered(t.transId, 'CHARGEBACK', 5);
  // The first notification posted again much later: still two chargebacks.
  const first = gateway.callbacks.find((c) => c.fields.action === 'CHARGEBACK' && c.fields.trans_id === t.transId)!;
  expect((await service.request(form(first.fields))).text).toBe('OK');
  await reconcile();
  await reconcile();
  const stored = (await service.deps.store.findPayment(paymentId))!;
  expect(stored.transactions.filter((x) => x.type === 'chargeback').map((x) => [x.transId, x.amountMinor])).toEqual([[`${paymentId}.cb1`, 300], [`${paymentId}.cb2`, 200]]);
  expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'chargeback', chargeback_amount: '5.00' });
  await ledgerAgrees(paymentId);
  // The gateway refuses more than is left (208010), and nothing changes here.
  expect(gateway.chargeback(t.transId, 600)).toEqual({ error: 208010 });
});

it('a chargeback racing a refund the gateway accepted and carries out later: our records equal the gateway\'s ledger', async () => {
  const { shop, paymentId, t } = await paid();
  gateway.adversity.creditVoid = 'held';
  try {
    expect((await refundOf(service, shop, paymentId, '4.00')).status).toBe(200);
    // What is left after the refund in waiting: 6.00.
    expect(gateway.chargeback(t.transId)).toEqual({ ok: true, amountMinor: 600 });
    await callbacksAnswered(t.transId, 'CHARGEBACK');
    await reconcile();
    expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'chargeback', chargeback_amount: '6.00' });
    gateway.finishWaiting();
  } finally {
    gateway.adversity.creditVoid = 'immediate';
  }
  await callbacksAnswered(t.transId, 'CREDITVOID');
  for (let i = 0; i < 5 && Object.keys((await service.deps.store.findPayment(paymentId))?.refunds ?? {}).length; i++) {
    clock.advance(121_000);
    await reconcile();
  }
  expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'chargeback', chargeback_amount: '6.00', refunded_amount: '4.00' });
  await ledgerAgrees(paymentId);
});

it('a refund done before the chargeback: the chargeback takes what is left; a later refund is refused before any request to the gateway', async () => {
  const { shop, paymentId, t } = await paid();
  expect((await refundOf(service, shop, paymentId, '2.50')).status).toBe(200);
  expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'settled', refunded_amount: '2.50' });
  expect(gateway.chargeback(t.transId)).toEqual({ ok: true, amountMinor: 750 });
  await callbacksAnswered(t.transId, 'CHARGEBACK');
  await reconcile();
  expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'chargeback', chargeback_amount: '7.50', refunded_amount: '2.50' });
  const sent = gateway.requests.filter((r) => r.action === 'CREDITVOID').length;
  expect((await refundOf(service, shop, paymentId, '0.10')).json).toMatchObject({ error_code: ERRORS.REFUND_NOT_ALLOWED.code });
  expect(gateway.requests.filter((r) => r.action === 'CREDITVOID')).toHaveLength(sent);
  await ledgerAgrees(paymentId);
});

it('CHARGEBACK callbacks that are forged, of an unknown order or not confirmed by the gateway are refused (ERROR) and change nothing', async () => {
  const { shop, paymentId, t } = await paid();
  const genuine = { action: 'CHARGEBACK', result: 'SUCCESS', status: 'CHARGEBACK', order_id: t.orderId, trans_id: t.transId, amount: '10.00', reason_code: '4837', chargeback_date: '2030-01-01', bank_date: '2030-01-01' };
  const bad = [
    { ...genuine, hash: 'f'.repeat(32) },
    { ...genuine, order_id: `${paymentId}.9`, hash: transactionHash(gateway.password, t.party, t.transId) },
    { ...genuine, trans_id: 'not-this-payments', hash: transactionHash(gateway.password, t.party, 'not-this-payments') },
  ];
  for (const fields of bad) expect(await service.request(form(fields))).toMatchObject({ status: 400, text: 'ERROR' });
  // A genuine-looking callback the gateway has no chargeback for: noted, read, nothing recorded.
  expect(await service.request(form({ ...genuine, hash: transactionHash(gateway.password, t.party, t.transId) }))).toMatchObject({ status: 200, text: 'OK' });
  await reconcile();
  expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'settled' });
  expect((await statusOf(service, shop, paymentId)).chargeback_amount).toBeUndefined();
  const stored = (await service.deps.store.findPayment(paymentId))!;
  expect(stored.disputesRead).toBe(stored.disputeNews);
  expect(stored.disputeNews).toBe(1);
  await ledgerAgrees(paymentId);
});

it('a CHARGEBACK callback while the gateway cannot be read: the payment stays due and the next run records it', async () => {
  const { shop, paymentId, t } = await paid();
  expect(gateway.chargeback(t.transId, 100)).toMatchObject({ ok: true });
  await callbacksAnswered(t.transId, 'CHARGEBACK');
  gateway.dropNext('GET_TRANS_DETAILS');
  await reconcile();
  expect((await statusOf(service, shop, paymentId)).status).toBe('settled');
  clock.advance(121_000);
  await reconcile();
  expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'chargeback', chargeback_amount: '1.00' });
  await ledgerAgrees(paymentId);
});

it('a settled payment is asked about chargebacks 1, 7, 30 and 120 days on: each check at rest is one write, which files the payment for the next; one whose notification was lost is found by the next check', async () => {
  const { shop, paymentId, t } = await paid();
  const started = clock.now();
  const settledAt = Date.parse((await service.deps.store.findPayment(paymentId))!.transactions.find((x) => x.type === 'sale' && x.status === 'success')!.at);
  const state = async () => (await service.deps.db.send(new GetCommand({ TableName: service.backend.tableName, Key: key.payment(paymentId), ConsistentRead: true }))).Item!;
  const dueOn = async () => (await state()).workSk?.split('#')[0] as string | undefined;
  const day = (n: number) => new Date(settledAt + n * 24 * 3600_000).toISOString();
  // Writes of this payment's state item, as the reconciler sends them.
  let writes = 0;
  service.deps.db.middlewareStack.add(
    (next, context) => async (args) => {
      const k = (args as { input?: { Key?: { pk?: string; sk?: string } } }).input?.Key;
      if (/^(Update|Put)Item/.test(context.commandName ?? '') && k?.pk === key.payment(paymentId).pk && k.sk === 'PAYMENT') writes++;
      return next(args);
    },
    { step: 'initialize', name: 'countDisputeCheckWrites' },
  );
  try {
    // The gateway's SALE callback is a hint that makes the payment due at once; the run after it files it for its first check.
    await callbacksAnswered(t.transId, 'SALE');
    await reconcile();
    expect(await dueOn()).toBe(day(1));
    const check = async (n: number) => {
      clock.set(new Date(Date.parse(day(n)) + 60_000));
      writes = 0;
      await reconcile();
    };
    await check(1);
    expect([(await state()).disputeChecks, await dueOn(), writes]).toEqual([1, day(7), 1]);

    // A chargeback whose notification never arrives (the gateway's callback lost).
    const notifyUrl = gateway.notifyUrl;
    gateway.notifyUrl = 'http://127.0.0.1:9/lost';
    try {
      expect(gateway.chargeback(t.transId, 300, '13.1')).toMatchObject({ ok: true });
    } finally {
      gateway.notifyUrl = notifyUrl;
    }
    expect((await statusOf(service, shop, paymentId)).chargeback_amount).toBeUndefined();
    await check(7);
    expect(await statusOf(service, shop, paymentId)).toMatchObject({ chargeback_amount: '3.00' });
    expect([(await state()).disputeChecks, await dueOn()]).toEqual([2, day(30)]);

    await check(30);
    expect([(await state()).disputeChecks, await dueOn(), writes]).toEqual([3, day(120), 1]);
    await check(120);
    // The last check: out of the queue, in the same one write.
    expect([(await state()).disputeChecks, (await state()).workPk, writes]).toEqual([4, undefined, 1]);
    await ledgerAgrees(paymentId);
  } finally {
    service.deps.db.middlewareStack.remove('countDisputeCheckWrites');
    clock.set(started);
  }
});

it('a refund that lands between a scheduled check\'s read and its write: the one write is refused, the check is counted alone and the payment filed as the refund left it', async () => {
  const { shop, paymentId, t } = await paid();
  const started = clock.now();
  await callbacksAnswered(t.transId, 'SALE');
  await reconcile();
  const settledAt = Date.parse((await service.deps.store.findPayment(paymentId))!.transactions.find((x) => x.type === 'sale' && x.status === 'success')!.at);
  const deps = service.deps as { store: typeof service.deps.store };
  const store = deps.store;
  let raced = 0;
  let combinedApplied: boolean | undefined;
  // The check's combined write meets a full refund made just before it (the whole amount: the status moves).
  const apply: typeof store.apply = async (id, transition) => {
    if (id === paymentId && transition.change.set.disputeChecks !== undefined && transition.change.queue !== undefined && raced++ === 0) {
      expect((await refundOf(service, shop, paymentId, '10.00')).status).toBe(200);
      const applied = await store.apply(id, transition);
      combinedApplied = applied.applied;
      return applied;
    }
    return store.apply(id, transition);
  };
  deps.store = new Proxy(store, { get: (target, name) => (name === 'apply' ? apply : (Reflect.get(target, name, target) as unknown)) });
  try {
    clock.set(new Date(settledAt + 24 * 3600_000 + 60_000));
    await reconcile();
  } finally {
    deps.store = store;
  }
  expect([raced, combinedApplied]).toEqual([1, false]);
  const after = (await service.deps.store.findPayment(paymentId))!;
  expect(after.disputeChecks).toBe(1);
  expect(after.refundedMinor).toBe(1000);
  // Filed where the refunded payment rests (the reconciler's own refile), money agreeing with the gateway.
  expect(Object.keys(after.refunds ?? {})).toEqual([]);
  await ledgerAgrees(paymentId);
  clock.set(started);
});
