import { MemoryPaymentStore } from '../../lambdas/adapters/memory/payment-store';
import type { Payment } from '../../lambdas/domain/payment';
import { settledPayment } from '../support/payment-fixtures';
import type { Acquirer, FollowUpOutcome } from '../../lambdas/ports/acquirer';
import { ManualClock } from '../../lambdas/ports/clock';
import type { Ids } from '../../lambdas/ports/ids';
import { refund } from '../../lambdas/use-cases/refund-payment';
import { VOID_IN_PROGRESS_REASON, voidPayment } from '../../lambdas/use-cases/void-payment';

/**
 * The money commands on the in-memory store (held to the DynamoDB store by test/contract/): the
 * rules as the use cases apply them, with no HTTP and no table. The merchant's wire format around
 * them is tested over HTTP (test/integration/refund-retry, void, capture-api).
 */
const T0 = new Date('2031-06-01T08:00:00.000Z');

function world(answer: (kind: 'refund' | 'void') => Promise<FollowUpOutcome> = async () => ({ kind: 'approved', acquirerRef: 'ref' })) {
  const store = new MemoryPaymentStore();
  const clock = new ManualClock(T0);
  let n = 0;
  const ids: Ids = { paymentId: () => `p-${++n}`, transId: () => `t-${++n}`, linkSecret: () => Buffer.alloc(18), longToken: () => 'x'.repeat(64) };
  const asked: string[] = [];
  const refuse = () => Promise.reject(new Error('not used'));
  const acquirer: Acquirer = {
    authorize: refuse,
    completeAction: refuse,
    lookup: refuse,
    chargebacks: refuse,
    close: refuse,
    capture: refuse,
    reverse: refuse,
    refund: (r) => (asked.push(`refund ${r.amountMinor}`), answer('refund')),
    void: (r) => (asked.push(`void ${r.amountMinor}`), answer('void')),
  };
  const deps = { store, clock, ids, acquirer, policy: { reconcileAfterMs: 120_000 } };
  const settled = async (): Promise<Payment> => {
    const payment = settledPayment(T0, { paymentId: ids.paymentId(), authorization: { idempotencyKey: 'auth', acquirerRef: 'ref-1' } });
    await store.createPayment(payment);
    return (await store.findPayment(payment.paymentId))!;
  };
  return { deps, store, asked, settled };
}

describe('refund', () => {
  it('concurrent refunds that fit all go through; the one that does not fit is refused before the acquirer is asked', async () => {
    const w = world();
    const p = await w.settled();
    const results = await Promise.allSettled([400, 300, 300, 100].map((amountMinor) => refund(w.deps, { payment: p, amountMinor, actor: 'merchant:shop' })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { name: 'ApiError' } });
    const after = await w.store.findPayment(p.paymentId);
    expect(after).toMatchObject({ status: 'refund', refundedMinor: 1000, refundHeldMinor: 1000, refunds: {} });
    expect(w.asked.sort()).toEqual(['refund 300', 'refund 300', 'refund 400']);
  });

  it('a replay with the same transaction id finds its first refund and starts none', async () => {
    const w = world();
    const p = await w.settled();
    await refund(w.deps, { payment: p, amountMinor: 300, actor: 'merchant:shop', transId: 'idem-1' });
    await refund(w.deps, { payment: p.paymentId, amountMinor: 300, actor: 'merchant:shop', transId: 'idem-1' });
    expect(w.asked).toEqual(['refund 300']);
    expect((await w.store.findPayment(p.paymentId))?.refundedMinor).toBe(300);
  });

  it('a declined refund gives its amount back to what is left to refund', async () => {
    const w = world(async () => ({ kind: 'declined', acquirerRef: 'ref', reason: 'Refund declined.' }));
    const p = await w.settled();
    await refund(w.deps, { payment: p, amountMinor: 1000, actor: 'operator:alice' });
    expect(await w.store.findPayment(p.paymentId)).toMatchObject({ status: 'settled', refundHeldMinor: 0, refunds: {} });
    expect((await w.store.findPayment(p.paymentId))!.transactions.at(-1)).toMatchObject({ type: 'refund', status: 'fail', actor: 'operator:alice', reason: 'Refund declined.' });
  });
});

describe('void', () => {
  it('voids once: a racing second void is refused and never reaches the acquirer', async () => {
    const w = world();
    const p = await w.settled();
    const results = await Promise.allSettled([voidPayment(w.deps, { payment: p, actor: 'merchant:shop' }), voidPayment(w.deps, { payment: p, actor: 'merchant:shop' })]);
    expect(results.filter((r) => r.status === 'fulfilled' && r.value.kind === 'voided')).toHaveLength(1);
    expect(w.asked).toEqual(['void 1000']);
    expect((await w.store.findPayment(p.paymentId))?.status).toBe('void');
  });

  it('an answer not in by answerBy is in progress; the intent stays for the reconciler', async () => {
    const w = world(() => new Promise(() => undefined));
    const p = await w.settled();
    const result = await voidPayment(w.deps, { payment: p, actor: 'merchant:shop', answerBy: new Date(Date.now() + 20) });
    expect(result.kind).toBe('in-progress');
    expect(VOID_IN_PROGRESS_REASON).toMatch(/being processed/);
    expect((await w.store.findPayment(p.paymentId))?.operation).toMatchObject({ kind: 'void', amountMinor: 1000 });
    expect(w.store.queueOf(p.paymentId)).toMatchObject({ name: 'reconcile' });
  });

  it('outside its window it fails with the reason, and nothing is started', async () => {
    const w = world();
    const p = await w.settled();
    const result = await voidPayment(w.deps, { payment: { ...p, voidableUntil: T0.toISOString() }, actor: 'merchant:shop' });
    expect(result).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/21:00/) });
    expect(w.asked).toEqual([]);
  });
});
