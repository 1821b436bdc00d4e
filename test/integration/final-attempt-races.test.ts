import { ManualClock } from '../../lambdas/ports/clock';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { receivingMerchants, verifiesWith, type CallbackReceiver, type ReceivedCallback } from '../support/callback-receiver';
import { closePage, openSession, statusOf, submitPage, type Session } from '../support/payments';
import { serviceForFile } from '../support/suites';

/**
 * Only a link's final attempt is reported (ADR 0017), decided by conditional writes: the customer's
 * Close racing another attempt, and the reconciler closing an expired link racing the customer's
 * Close. Whatever wins, the merchant gets exactly one outcome callback, and it agrees with the
 * status endpoint and with the payment's history.
 */
const START = new Date('2030-04-01T08:00:00Z');
const MINUTE = 60_000;
const ROUNDS = 12;

const clock = new ManualClock(START);
const merchants = receivingMerchants(() => service, 'Race Shop', { returnParams: true });
const merchantWithReceiver = merchants.merchant;

const { service } = serviceForFile({ clock, clockAt: START, alsoClose: [merchants] });

const shape = (cbs: readonly ReceivedCallback[]) => cbs.map((c) => `${c.fields.type}/${c.fields.status}/${c.fields.order_status}`);
const of = (receiver: CallbackReceiver, s: Session) => receiver.received.filter((c) => c.fields.id === s.paymentId);
const stored = async (s: Session) => (await service.deps.store.findPayment(s.paymentId))!;

/** A link whose first attempt was declined (02/38): the customer may still try again. */
async function declinedOnce(shop: MerchantCredentials, extra: Record<string, unknown> = {}): Promise<Session> {
  const session = await openSession(service, shop, { extra });
  expect((await submitPage(service, session, { card: '02/38' })).status).toBe(200);
  return session;
}

describe('Close racing another attempt on a declined link', () => {
  it.each([
    ['an approval (01/38)', '01/38'],
    ['another decline (02/38)', '02/38'],
  ])('with %s: one of them wins, and exactly one outcome is reported', async (_what, card) => {
    const { shop, receiver } = await merchantWithReceiver();
    const sessions = await Promise.all(Array.from({ length: ROUNDS }, () => declinedOnce(shop)));
    const answers = await Promise.all(sessions.map((s) => Promise.all([closePage(service, s), submitPage(service, s, { card })])));
    await runCallbackJob(service.deps);
    await runCallbackJob(service.deps);

    const outcomes = new Set<string>();
    for (const [i, s] of sessions.entries()) {
      const [close, pay] = answers[i]!;
      expect(close.status).toBeLessThan(500);
      expect(pay.status).toBeLessThan(500);
      const p = await stored(s);
      const status = await statusOf(service, shop, s.paymentId);
      const callbacks = of(receiver, s);
      for (const c of callbacks) expect(verifiesWith(c, shop.password)).toBe(true);
      if (p.status === 'settled') {
        // The attempt won: the earlier decline is never reported, the link did not close.
        expect(p.linkClosed).toBeUndefined();
        expect(shape(callbacks)).toEqual(['sale/success/settled']);
        expect(status.status).toBe('settled');
        outcomes.add('paid');
      } else if (p.attempt === 1) {
        // Close won before the attempt claimed the link: the attempt was refused, the first decline reported.
        expect(p.linkClosed?.why).toBe('customer');
        expect(shape(callbacks)).toEqual(['sale/fail/decline']);
        expect(callbacks[0]!.fields.trans_id).toBe(p.transactions[0]!.transId);
        expect(status).toMatchObject({ status: 'decline', reason: 'Declined by processing.' });
        outcomes.add('closed first');
      } else if (p.linkClosed) {
        // The second attempt was declined too, and Close closed on it (after its own lost race).
        expect([p.status, p.attempt, p.linkClosed.why]).toEqual(['decline', 2, 'customer']);
        expect(shape(callbacks)).toEqual(['sale/fail/decline']);
        expect(callbacks[0]!.fields.trans_id).toBe(p.transactions.at(-1)!.transId);
        expect(status.status).toBe('decline');
        outcomes.add('closed after');
      } else {
        // Close came while the second attempt was at the acquirer: it showed "processing" and closed
        // nothing; that attempt's decline is held like the first one.
        expect(close.status).toBe(202);
        expect([p.status, p.attempt]).toEqual(['decline', 2]);
        expect(callbacks).toEqual([]);
        expect(status.status).toBe('prepare');
        outcomes.add('close during the attempt');
      }
    }
    expect([...outcomes].every((o) => (card === '01/38' ? ['paid', 'closed first'] : ['closed first', 'closed after', 'close during the attempt']).includes(o))).toBe(true);
  }, 90_000);

  it('Close right after an attempt was recorded closes on that attempt', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    const s = await declinedOnce(shop);
    expect((await submitPage(service, s, { card: '02/38' })).status).toBe(200);
    const close = await closePage(service, s);
    expect(close.status).toBe(303);
    expect(close.headers.location).toMatch(/^https:\/\/shop\.example\/cancel\?payment_id=/);
    await runCallbackJob(service.deps);
    const p = await stored(s);
    expect(p.transactions.map((t) => [t.type, t.status, Boolean(t.held)])).toEqual([['sale', 'fail', true], ['sale', 'fail', true]]);
    expect(shape(of(receiver, s))).toEqual(['sale/fail/decline']);
    expect(of(receiver, s)[0]!.fields.trans_id).toBe(p.transactions[1]!.transId);
    const records = await service.deps.callbacks.records(s.paymentId);
    expect(records.map((r) => [r.index, r.state])).toEqual([[0, 'skipped'], [1, 'delivered']]);
  });
});

describe('the reconciler closing an expired link', () => {
  it('reports a held decline once, also when the customer presses Close at the same moment', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    const sessions = await Promise.all(Array.from({ length: ROUNDS }, () => declinedOnce(shop, { session_expiry: 5 })));
    for (const s of sessions) expect((await statusOf(service, shop, s.paymentId)).status).toBe('prepare');
    await runCallbackJob(service.deps);
    expect(sessions.flatMap((s) => of(receiver, s))).toEqual([]);

    clock.set(new Date(START.getTime() + 6 * MINUTE));
    // Half of the customers press Close just as the job runs.
    await Promise.all([reconcileDue(service.deps), ...sessions.filter((_, i) => i % 2 === 0).map((s) => closePage(service, s))]);
    await reconcileDue(service.deps);
    await runCallbackJob(service.deps);

    for (const s of sessions) {
      const p = await stored(s);
      expect(p.linkClosed?.why).toMatch(/^(expired|customer)$/);
      expect(shape(of(receiver, s))).toEqual(['sale/fail/decline']);
      await expect(statusOf(service, shop, s.paymentId)).resolves.toMatchObject({ status: 'decline', reason: 'Declined by processing.' });
    }
    // Nothing is sent twice by later runs.
    await reconcileDue(service.deps);
    await runCallbackJob(service.deps);
    for (const s of sessions) expect(of(receiver, s)).toHaveLength(1);
  });
});
