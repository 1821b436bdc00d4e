import declineExample from './fixtures/callback-decline.json';
import refundFailExample from './fixtures/callback-refund-fail.json';
import refundExample from './fixtures/callback-refund.json';
import saleExample from './fixtures/callback-sale.json';
import { signFields } from '../../lambdas/domain/hash';
import { ManualClock } from '../../lambdas/ports/clock';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { receivingMerchants, verifiesWith, type ReceivedCallback } from '../support/callback-receiver';
import { closePage, openSession, refundOf, statusOf, submitPage, transactionsOf, type Session } from '../support/payments';
import { serviceForFile } from '../support/suites';
import { callbacksOf, outcome, outcomeOf, relay, type DocumentedSource } from './conformance';

/**
 * The platform's documented callback examples (Callback Notification › Examples), reproduced with
 * the example's order and customer and compared with what our receiver gets: the exact fields in
 * the exact order, each value either the example's (type, status, order_status, the order, card
 * mask, customer, reason) or, where it belongs to one payment (ids, dates, tokens, hash), the one
 * this payment must carry. Every field the example has and we do not send, every field we add,
 * and every value we word differently is listed in the fixture with its reason and asserted here.
 */
interface CallbackExample {
  readonly source: DocumentedSource;
  /** The example's fields in its order: [name, value]. */
  readonly documented: readonly (readonly string[])[];
  readonly sent: readonly string[];
  readonly perPayment: Readonly<Record<string, string>>;
  readonly notSent: Readonly<Record<string, string>>;
  readonly added: Readonly<Record<string, string>>;
  readonly values: Readonly<Record<string, { readonly ours: string; readonly why: string }>>;
}

const START = new Date('2030-05-01T09:00:00Z');
const DATE = '2030-05-01 09:00:00';

const clock = new ManualClock(START);
const merchants = receivingMerchants(() => service, 'Conformance Shop');
const { service } = serviceForFile({ clock, clockAt: START, alsoClose: [merchants] });

const documentedValue = (example: CallbackExample, name: string): string | undefined => example.documented.find(([n]) => n === name)?.[1];

/** The example's order and customer, as a session sends them. */
function documentedOrder(example: CallbackExample) {
  const value = (name: string) => documentedValue(example, name) ?? '';
  return {
    order: { number: value('order_number'), amount: value('order_amount'), currency: value('order_currency'), description: value('order_description') },
    customer: { name: value('customer_name'), email: value('customer_email') },
    schedule: documentedValue(example, 'schedule_id'),
  };
}

async function documentedSession(shop: MerchantCredentials, example: CallbackExample): Promise<Session> {
  const { order, customer, schedule } = documentedOrder(example);
  return openSession(service, shop, { order, extra: { customer }, ...(schedule ? { recurringInit: true, scheduleId: schedule } : {}) });
}

/** The values that belong to this payment and transaction, for the fields the fixture says are per payment or ours. */
async function perPayment(shop: MerchantCredentials, session: Session, known: { card: string; amount: string; transactionIndex: number }) {
  const transactions = await transactionsOf(service, session.paymentId);
  const status = await statusOf(service, shop, session.paymentId);
  const { number, amount, currency, description } = session.order;
  return {
    id: session.paymentId,
    trans_id: transactions[known.transactionIndex]?.transId,
    amount: known.amount,
    date: DATE,
    card_expiration_date: `${known.card.slice(0, 2)}/20${known.card.slice(3)}`,
    customer_ip: '127.0.0.1',
    recurring_init_trans_id: status.recurring_init_trans_id,
    recurring_token: status.recurring_token,
    hash: signFields([session.paymentId, number, amount, currency, description], shop.password),
  };
}

/** The received callback against the documented example: names, order and every value. */
function expectDocumented(cb: ReceivedCallback, example: CallbackExample, ours: Record<string, unknown>, password: string) {
  const documentedNames = example.documented.map(([name]) => name ?? '');
  const receivedNames = cb.pairs.map(([name]) => name);
  expect(cb.contentType).toBe('application/x-www-form-urlencoded; charset=utf-8');

  // The set: what the example has and we leave out, and what we add, each listed with its reason.
  expect(receivedNames).toEqual(example.sent);
  expect(documentedNames.filter((n) => !receivedNames.includes(n)).sort()).toEqual(Object.keys(example.notSent).sort());
  expect(receivedNames.filter((n) => !documentedNames.includes(n)).sort()).toEqual(Object.keys(example.added).sort());
  // The order: the guide's examples agree on the first eight fields, and so do we; after them
  // they disagree with each other, and we keep the order of protocol.md §4 (fixture "order").
  expect(receivedNames.slice(0, 8)).toEqual(documentedNames.slice(0, 8));
  expect(receivedNames.at(-1)).toBe('hash');

  // The values: the example's, except those of this payment and those we word differently.
  const expected = example.sent.map((name): [string, string] => {
    const differs = example.values[name];
    if (differs) {
      expect(documentedValue(example, name)).not.toBe(differs.ours);
      return [name, differs.ours];
    }
    if (name in example.perPayment || name in example.added) {
      const value = ours[name];
      if (typeof value !== 'string') throw new Error(`no value of this payment for ${name}`);
      return [name, value];
    }
    const documented = documentedValue(example, name);
    if (documented === undefined) throw new Error(`${name} is neither documented, per payment nor ours`);
    return [name, documented];
  });
  expect(cb.pairs).toEqual(expected);
  expect(verifiesWith(cb, password)).toBe(true);
}

describe('the documented callbacks', () => {
  it('successful sale, then successful refund: the guide\'s two examples of one payment (same id and hash)', async () => {
    const { shop, receiver } = await merchants.merchant();
    const session = await documentedSession(shop, saleExample);
    expect((await submitPage(service, session, { card: '01/38' })).status).toBe(303);
    expect((await refundOf(service, shop, session.paymentId, '1.00')).status).toBe(200);
    await relay(service);

    const received = callbacksOf(receiver, session.paymentId);
    expect(received.map(outcomeOf)).toEqual([outcome('sale/success/settled'), outcome('refund/waiting/settled'), outcome('refund/success/settled')]);
    const [sale, , refunded] = received;
    expectDocumented(sale!, saleExample, await perPayment(shop, session, { card: '01/38', amount: '3.01', transactionIndex: 0 }), shop.password);
    expectDocumented(refunded!, refundExample, await perPayment(shop, session, { card: '01/38', amount: '1.00', transactionIndex: 2 }), shop.password);
    // The refund's two callbacks are one transaction: accepted (waiting), then its outcome.
    expect(received[1]!.fields.trans_id).toBe(refunded!.fields.trans_id);
  });

  it('unsuccessful sale: the decline, once final (02/38, then Close), is the payment\'s only callback', async () => {
    const { shop, receiver } = await merchants.merchant();
    const session = await documentedSession(shop, declineExample);
    await submitPage(service, session, { card: '02/38' });
    await closePage(service, session);
    await relay(service);

    const received = callbacksOf(receiver, session.paymentId);
    expect(received.map(outcomeOf)).toEqual([outcome('sale/fail/decline', 'Declined by processing.')]);
    expectDocumented(received[0]!, declineExample, await perPayment(shop, session, { card: '02/38', amount: '3.01', transactionIndex: 0 }), shop.password);
  });

  it('unsuccessful refund (07/38, whose refunds the sandbox declines): refund/fail with the payment still settled', async () => {
    const { shop, receiver } = await merchants.merchant();
    const session = await documentedSession(shop, refundFailExample);
    await submitPage(service, session, { card: '07/38' });
    expect((await refundOf(service, shop, session.paymentId, '1.00')).status).toBe(200);
    await relay(service);

    const received = callbacksOf(receiver, session.paymentId);
    expect(received.map(outcomeOf)).toEqual([
      outcome('sale/success/settled'),
      outcome('refund/waiting/settled'),
      outcome('refund/fail/settled', 'Refund declined by processing.'),
    ]);
    const failed = received[2]!;
    // protocol.md §7: refund/fail/settled. The example's order_status=decline would read as a declined sale.
    expect(documentedValue(refundFailExample, 'order_status')).toBe('decline');
    expect(failed.fields.order_status).toBe('settled');
    expectDocumented(failed, refundFailExample, await perPayment(shop, session, { card: '07/38', amount: '1.00', transactionIndex: 2 }), shop.password);
    await expect(statusOf(service, shop, session.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });
});
