import { signFields } from '../../lambdas/domain/hash';
import { ManualClock } from '../../lambdas/ports/clock';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { receivingMerchants, verifiesWith, type CallbackReceiver } from '../support/callback-receiver';
import type { HttpAnswer } from '../support/http';
import { closePage, openSession, paidPayment, recurringOf, refundOf, retryOf, statusOf, submitPage, transactionsOf, type Session } from '../support/payments';
import { serviceForFile } from '../support/suites';
import { answerChallenge, callbacksOf, outcome, outcomeOf, relay, submitPageFrom, type Outcome } from './conformance';

/**
 * The callback sequence of every page flow, as the platform documents it (protocol.md §7; the
 * guide's Callback Notification: "only callback for the last payment attempt … callbacks for
 * intermediate attempts are not sent"), received by a real HTTP receiver: every callback the
 * payment produced, in order, compared on type, status, order_status and reason; each one signed,
 * carrying customer_ip and naming a transaction the payment really has. The status endpoint is
 * read at the moments a merchant would: it reads `decline` only once the decline is final (its
 * callback is queued then; after an expiry, at the reconciler's next run).
 * The customer's steps are form posts (the page works without script); time is a ManualClock.
 */
const START = new Date('2030-05-01T09:00:00Z');
const MINUTE = 60_000;
const CUSTOMER_IP = '127.0.0.1';

const clock = new ManualClock(START);
const merchants = receivingMerchants(() => service, 'Sequence Shop', { returnParams: true });
const { service } = serviceForFile({ clock, clockAt: START, alsoClose: [merchants] });

/** Delivers what is due and compares the payment's whole sequence so far. */
async function expectSequence(receiver: CallbackReceiver, shop: MerchantCredentials, paymentId: string, expected: Outcome[], ip = CUSTOMER_IP) {
  await relay(service);
  const received = callbacksOf(receiver, paymentId);
  expect(received.map(outcomeOf)).toEqual(expected);
  const transactions = await transactionsOf(service, paymentId);
  for (const cb of received) {
    expect(verifiesWith(cb, shop.password)).toBe(true);
    expect(cb.fields.customer_ip).toBe(ip);
    // Each callback is one transaction of the payment, with that transaction's type and status.
    expect(transactions.filter((t) => t.transId === cb.fields.trans_id).map((t) => `${t.type}/${t.status}`)).toContain(`${cb.fields.type}/${cb.fields.status}`);
  }
  return received;
}

const statusNow = async (shop: MerchantCredentials, paymentId: string) => {
  const s = await statusOf(service, shop, paymentId);
  return { status: s.status, reason: s.reason };
};

/** The return parameters on a redirect to the merchant, with their hash checked (protocol.md §1, §4). */
function returnParameters(answer: HttpAnswer, session: Session, shop: MerchantCredentials): Record<string, string> {
  expect(answer.status).toBe(303);
  const url = new URL(String(answer.headers.location));
  const { number, amount, currency, description } = session.order;
  expect(url.searchParams.get('hash')).toBe(signFields([session.paymentId, number, amount, currency, description], shop.password));
  return Object.fromEntries(url.searchParams);
}

const pay = (session: Session, card: string) => submitPage(service, session, { card });

describe('a payment on the page', () => {
  it('card approved: sale/success/settled', async () => {
    const { shop, receiver } = await merchants.merchant();
    const s = await openSession(service, shop);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'prepare', reason: undefined });
    expect((await pay(s, '01/38')).status).toBe(303);
    await expectSequence(receiver, shop, s.paymentId, [outcome('sale/success/settled')]);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'settled', reason: undefined });
  });

  it('card approved for a DMS merchant: sale/success/pending', async () => {
    const { shop, receiver } = await merchants.merchant({ dms: true });
    const s = await openSession(service, shop);
    await pay(s, '01/38');
    await expectSequence(receiver, shop, s.paymentId, [outcome('sale/success/pending')]);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'pending', reason: undefined });
  });

  it.each([
    ['3-D Secure (05/38)', '05/38', '3ds'],
    ['bank redirect (12/38)', '12/38', 'redirect'],
  ])('%s approved: the step when the customer is sent there, then sale/success/settled', async (_flow, card, step) => {
    const { shop, receiver } = await merchants.merchant();
    const s = await openSession(service, shop);
    const sent = await pay(s, card);
    await expectSequence(receiver, shop, s.paymentId, [outcome(`${step}/success/${step}`)]);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: step, reason: undefined });
    await answerChallenge(service, sent, 'confirm');
    await expectSequence(receiver, shop, s.paymentId, [outcome(`${step}/success/${step}`), outcome('sale/success/settled')]);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'settled', reason: undefined });
  });
});

describe('declines: only the final attempt of a link is reported', () => {
  it('3-D Secure declined (06/38), then Close: the step, nothing while the customer may try again, then sale/fail/decline', async () => {
    const { shop, receiver } = await merchants.merchant();
    const s = await openSession(service, shop);
    await answerChallenge(service, await pay(s, '06/38'), 'confirm');
    await expectSequence(receiver, shop, s.paymentId, [outcome('3ds/success/3ds')]);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'prepare', reason: undefined });

    const closed = await closePage(service, s);
    const [, declined] = await expectSequence(receiver, shop, s.paymentId, [outcome('3ds/success/3ds'), outcome('sale/fail/decline', '3-D Secure authentication failed.')]);
    expect(returnParameters(closed, s, shop)).toMatchObject({ payment_id: s.paymentId, trans_id: declined!.fields.trans_id, order_id: s.order.number });
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'decline', reason: '3-D Secure authentication failed.' });
  });

  it('bank redirect cancelled at the bank (12/38), then Close: the step, then sale/fail/decline', async () => {
    const { shop, receiver } = await merchants.merchant();
    const s = await openSession(service, shop);
    await answerChallenge(service, await pay(s, '12/38'), 'cancel');
    await expectSequence(receiver, shop, s.paymentId, [outcome('redirect/success/redirect')]);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'prepare', reason: undefined });
    await closePage(service, s);
    await expectSequence(receiver, shop, s.paymentId, [outcome('redirect/success/redirect'), outcome('sale/fail/decline', 'Payment was not confirmed at the bank.')]);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'decline', reason: 'Payment was not confirmed at the bank.' });
  });

  it('declined (02/38), then approved (01/38) on the same link: exactly one callback, sale/success/settled; status prepare in between', async () => {
    const { shop, receiver } = await merchants.merchant();
    const s = await openSession(service, shop);
    expect((await pay(s, '02/38')).status).toBeLessThan(300);
    await expectSequence(receiver, shop, s.paymentId, []);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'prepare', reason: undefined });
    await pay(s, '01/38');
    const [sale] = await expectSequence(receiver, shop, s.paymentId, [outcome('sale/success/settled')]);
    const transactions = await transactionsOf(service, s.paymentId);
    expect(transactions.map((t) => `${t.type}/${t.status}`)).toEqual(['sale/fail', 'sale/success']);
    expect(sale!.fields.trans_id).toBe(transactions[1]!.transId);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'settled', reason: undefined });
  });

  it('3-D Secure declined (06/38), then approved (01/38): the first attempt\'s step, then only the sale that settled it', async () => {
    const { shop, receiver } = await merchants.merchant();
    const s = await openSession(service, shop);
    await answerChallenge(service, await pay(s, '06/38'), 'confirm');
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'prepare', reason: undefined });
    await pay(s, '01/38');
    await expectSequence(receiver, shop, s.paymentId, [outcome('3ds/success/3ds'), outcome('sale/success/settled')]);
  });

  it('declined until the declines are used up (maxDeclines 2): one callback, for the last attempt; the customer goes to cancel_url', async () => {
    const { shop, receiver } = await merchants.merchant({ maxDeclines: 2 });
    const s = await openSession(service, shop);
    expect((await pay(s, '02/38')).status).toBeLessThan(300);
    await expectSequence(receiver, shop, s.paymentId, []);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'prepare', reason: undefined });

    const last = await pay(s, '02/38');
    const [declined] = await expectSequence(receiver, shop, s.paymentId, [outcome('sale/fail/decline', 'Declined by processing.')]);
    const transactions = await transactionsOf(service, s.paymentId);
    expect(transactions.map((t) => `${t.type}/${t.status}`)).toEqual(['sale/fail', 'sale/fail']);
    expect(declined!.fields.trans_id).toBe(transactions[1]!.transId);
    expect(String(last.headers.location)).toMatch(/^https:\/\/shop\.example\/cancel\?/);
    expect(returnParameters(last, s, shop)).toMatchObject({ payment_id: s.paymentId, trans_id: transactions[1]!.transId });
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'decline', reason: 'Declined by processing.' });
  });

  it('declined, then Close: one sale/fail/decline, status decline, and cancel_url gets the return parameters', async () => {
    const { shop, receiver } = await merchants.merchant();
    const s = await openSession(service, shop);
    await pay(s, '02/38');
    await expectSequence(receiver, shop, s.paymentId, []);
    const closed = await closePage(service, s);
    expect(String(closed.headers.location)).toMatch(/^https:\/\/shop\.example\/cancel\?/);
    const [declined] = await expectSequence(receiver, shop, s.paymentId, [outcome('sale/fail/decline', 'Declined by processing.')]);
    expect(returnParameters(closed, s, shop)).toEqual({
      payment_id: s.paymentId,
      trans_id: declined!.fields.trans_id,
      order_id: s.order.number,
      hash: expect.any(String),
    });
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'decline', reason: 'Declined by processing.' });
    // Closed is final: pressing Close again reports nothing more.
    await closePage(service, s);
    await expectSequence(receiver, shop, s.paymentId, [outcome('sale/fail/decline', 'Declined by processing.')]);
  });

  it('Close before any attempt: cancel_url without parameters, no callback (the guide, "Customer return after payment")', async () => {
    const { shop, receiver } = await merchants.merchant();
    const s = await openSession(service, shop);
    const closed = await closePage(service, s);
    expect(closed.status).toBe(303);
    expect(closed.headers.location).toBe('https://shop.example/cancel');
    await expectSequence(receiver, shop, s.paymentId, []);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'prepare', reason: undefined });
  });

  it('declined, then the link expires: sale/fail/decline once the reconciler closes the link', async () => {
    const { shop, receiver } = await merchants.merchant();
    const s = await openSession(service, shop, { extra: { session_expiry: 10 } });
    await pay(s, '02/38');
    await reconcileDue(service.deps);
    await expectSequence(receiver, shop, s.paymentId, []);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'prepare', reason: undefined });

    clock.set(new Date(START.getTime() + 11 * MINUTE));
    // Expired, not yet seen by the reconciler: the status already reads the final decline; its
    // callback follows at the reconciler's next run (README: "within a minute or two of the expiry").
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'decline', reason: 'Declined by processing.' });
    await reconcileDue(service.deps);
    await expectSequence(receiver, shop, s.paymentId, [outcome('sale/fail/decline', 'Declined by processing.')]);
    expect(await statusNow(shop, s.paymentId)).toEqual({ status: 'decline', reason: 'Declined by processing.' });
    await reconcileDue(service.deps);
    await expectSequence(receiver, shop, s.paymentId, [outcome('sale/fail/decline', 'Declined by processing.')]);
  });
});

describe('refunds', () => {
  it('partial, then the rest: refund/waiting/settled, refund/success/settled, then refund/waiting/settled, refund/success/refund', async () => {
    const { shop, receiver } = await merchants.merchant();
    const paid = await paidPayment(service, shop, { order: { amount: '10.00' } });
    expect((await refundOf(service, shop, paid.paymentId, '4.00')).status).toBe(200);
    const partial = await expectSequence(receiver, shop, paid.paymentId, [outcome('sale/success/settled'), outcome('refund/waiting/settled'), outcome('refund/success/settled')]);
    expect(partial.map((c) => c.fields.amount)).toEqual(['10.00', '4.00', '4.00']);
    expect(await statusNow(shop, paid.paymentId)).toEqual({ status: 'settled', reason: undefined });

    expect((await refundOf(service, shop, paid.paymentId, '6.00')).status).toBe(200);
    const all = await expectSequence(receiver, shop, paid.paymentId, [
      outcome('sale/success/settled'),
      outcome('refund/waiting/settled'),
      outcome('refund/success/settled'),
      outcome('refund/waiting/settled'),
      outcome('refund/success/refund'),
    ]);
    expect(all.slice(3).map((c) => c.fields.amount)).toEqual(['6.00', '6.00']);
    expect(await statusNow(shop, paid.paymentId)).toEqual({ status: 'refund', reason: undefined });
  });

  it('full at once: refund/waiting/settled, then refund/success/refund', async () => {
    const { shop, receiver } = await merchants.merchant();
    const paid = await paidPayment(service, shop, { order: { amount: '10.00' } });
    expect((await refundOf(service, shop, paid.paymentId, '10.00')).status).toBe(200);
    await expectSequence(receiver, shop, paid.paymentId, [outcome('sale/success/settled'), outcome('refund/waiting/settled'), outcome('refund/success/refund')]);
    expect(await statusNow(shop, paid.paymentId)).toEqual({ status: 'refund', reason: undefined });
  });

  it('declined (07/38): refund/waiting/settled, then refund/fail/settled with the reason', async () => {
    const { shop, receiver } = await merchants.merchant();
    const paid = await paidPayment(service, shop, { card: '07/38', order: { amount: '10.00' } });
    expect((await refundOf(service, shop, paid.paymentId, '10.00')).status).toBe(200);
    await expectSequence(receiver, shop, paid.paymentId, [
      outcome('sale/success/settled'),
      outcome('refund/waiting/settled'),
      outcome('refund/fail/settled', 'Refund declined by processing.'),
    ]);
    expect(await statusNow(shop, paid.paymentId)).toEqual({ status: 'settled', reason: undefined });
  });
});

describe('customer_ip on every callback', () => {
  /** The first payment of the chain is paid from another loopback address than every later request. */
  const FIRST_CUSTOMER_IP = '127.0.0.2';

  async function chainPaidFrom(shop: MerchantCredentials) {
    const s = await openSession(service, shop, { recurringInit: true });
    expect((await submitPageFrom(service, s, { card: '01/38' }, FIRST_CUSTOMER_IP)).status).toBe(303);
    const status = await statusOf(service, shop, s.paymentId);
    return { session: s, token: String(status.recurring_token), initTransId: String(status.recurring_init_trans_id) };
  }

  it('a recurring charge carries the IP of the payment that started the chain', async () => {
    const { shop, receiver } = await merchants.merchant();
    const chain = await chainPaidFrom(shop);
    await expectSequence(receiver, shop, chain.session.paymentId, [outcome('sale/success/settled')], FIRST_CUSTOMER_IP);
    const charged = await recurringOf<{ payment_id: string }>(service, shop, { initTransId: chain.initTransId, token: chain.token, order: { amount: '4.00' } });
    expect(charged.status).toBe(200);
    await expectSequence(receiver, shop, charged.json.payment_id, [outcome('recurring/success/settled')], FIRST_CUSTOMER_IP);
  });

  it('a soft-declined recurring charge and its retry carry it too', async () => {
    const { shop, receiver } = await merchants.merchant();
    const chain = await chainPaidFrom(shop);
    await relay(service);
    const declined = await recurringOf<{ payment_id: string }>(service, shop, { initTransId: chain.initTransId, token: chain.token, order: { amount: '10.52' } });
    expect((await retryOf(service, shop, declined.json.payment_id)).status).toBe(200);
    await relay(service);
    const received = callbacksOf(receiver, declined.json.payment_id);
    expect(received.map(outcomeOf)).toEqual([outcome('recurring/fail/decline', 'Insufficient funds. Retry later.'), outcome('recurring/success/settled')]);
    for (const cb of received) expect(cb.fields.customer_ip).toBe(FIRST_CUSTOMER_IP);
  });

  it('a callback delivered again after a failed delivery is the same form, customer_ip included', async () => {
    const { shop, receiver } = await merchants.merchant();
    receiver.script(500);
    const s = await openSession(service, shop);
    await pay(s, '01/38');
    await relay(service);
    clock.set(new Date(START.getTime() + 5 * MINUTE));
    await expectSequence(receiver, shop, s.paymentId, [outcome('sale/success/settled'), outcome('sale/success/settled')]);
    const [first, again] = receiver.received;
    expect([first!.answer, again!.answer]).toEqual([500, 200]);
    expect(again!.raw).toBe(first!.raw);
    expect(again!.fields.customer_ip).toBe(CUSTOMER_IP);
  });
});
