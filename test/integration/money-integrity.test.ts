import { signFields } from '../../lambdas/domain/hash';
import { ManualClock } from '../../lambdas/ports/clock';
import type { Acquirer } from '../../lambdas/ports/acquirer';
import type { Deps } from '../../lambdas/container';
import { sandboxLedger } from '../../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import { SANDBOX_OTP } from '../../lambdas/adapters/sandbox-acquirer/rules';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { refundPayment } from '../../lambdas/protocol/merchant/refund';
import { ABANDONED_REASON } from '../../lambdas/use-cases/reconcile';
import { checkPayment } from '../support/ledger-checker';
import { withFault } from '../support/faults';
import { openSession, paidPayment, recurringBody, recurringChain, refundOf, refusal, statusOf, storedPayment, submitPage, voidOf } from '../support/payments';
import { signBody } from '../support/sign';
import { serviceForFile } from '../support/suites';

/**
 * The findings of the money-integrity review, each replayed as it was found and checked against the
 * sandbox acquirer's own ledger: our records and the acquirer's agree, no 5xx, nothing left waiting
 * once the reconciler has run.
 */
const T0 = new Date('2031-02-03T07:00:00.000Z');
const MINUTE = 60_000;
const clock = new ManualClock(T0);
const { service, merchants: [shop] } = serviceForFile({ clock, clockAt: T0, merchants: [{ name: 'Integrity Shop' }] });

const ledger = (paymentId: string) => sandboxLedger(service.deps.db, service.backend.tableName, paymentId);
async function agrees(paymentId: string): Promise<void> {
  expect(checkPayment(await storedPayment(service, paymentId), await ledger(paymentId), { settled: true })).toEqual([]);
}
async function reconcileAfter(ms: number): Promise<void> {
  clock.set(new Date(clock.now().getTime() + ms));
  await reconcileDue(service.deps);
}

describe('1. a void racing a refund', () => {
  it.each(Array.from({ length: 10 }, (_, i) => i + 1))('round %i: one of them wins; the acquirer and our records agree', async () => {
    const paid = await paidPayment(service, shop, { order: { amount: '100.00' } });
    const [voided, refunded] = await Promise.all([voidOf<{ status: string }>(service, shop, paid.paymentId), refundOf(service, shop, paid.paymentId, '10.00')]);
    expect([voided.status, refunded.status].filter((s) => s >= 500)).toEqual([]);
    const approved = (await ledger(paid.paymentId)).filter((r) => r.outcome === 'approved' && (r.operation === 'void' || r.operation === 'refund'));
    // Never both: a void after a refund (or a refund on a void) would give back more than was paid.
    expect(approved.length).toBeLessThanOrEqual(1);
    if (voided.json.status === 'SUCCESS') expect(refunded.status).not.toBe(200);
    await agrees(paid.paymentId);
  });
});

describe('2. refund contention', () => {
  it('twenty concurrent 0.10 refunds of a 10.00 payment all fit: all accepted, all refunded, no 5xx', async () => {
    const paid = await paidPayment(service, shop, { order: { amount: '10.00' } });
    const answers = await Promise.all(Array.from({ length: 20 }, () => refundOf(service, shop, paid.paymentId, '0.10')));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    await reconcileAfter(3 * MINUTE);
    const p = await storedPayment(service, paid.paymentId);
    expect(p.refundedMinor).toBe(200);
    expect(p.transactions.filter((t) => t.type === 'refund' && t.status === 'success')).toHaveLength(20);
    expect((await ledger(paid.paymentId)).filter((r) => r.operation === 'refund' && r.outcome === 'approved')).toHaveLength(20);
    await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'settled', refunded_amount: '2.00' });
    await agrees(paid.paymentId);
  }, 90_000);

  it('refunds racing past the amount: exactly what fits is refunded, the rest refused with 208006', async () => {
    const paid = await paidPayment(service, shop, { order: { amount: '10.00' } });
    const answers = await Promise.all(Array.from({ length: 15 }, () => refundOf(service, shop, paid.paymentId, '1.00')));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(10);
    expect(answers.filter((a) => a.status !== 200).map((a) => a.json)).toEqual(Array(5).fill(refusal(208006, 'REFUND_AMOUNT_TOO_BIG')));
    await reconcileAfter(3 * MINUTE);
    await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'refund', refunded_amount: '10.00' });
    await agrees(paid.paymentId);
  });
});

describe('3. refunds across a crash', () => {
  const crashing = (fault: Parameters<typeof withFault>[2]) => {
    const parts = withFault(service.deps.store, service.deps.acquirer, fault);
    return { ...service.deps, store: parts.store, acquirer: parts.acquirer } as Deps;
  };

  it.each([
    ['reserved, never sent', { at: 'acquirer', nth: 1, when: 'before' }],
    ['approved at the acquirer, answer never recorded', { at: 'write', nth: 2, when: 'before' }],
    ['approved, reply lost on the way back', { at: 'acquirer', nth: 1, when: 'after' }],
  ] as const)('%s: the reconciler settles it; refunded_amount counts only money that moved', async (_name, fault) => {
    const paid = await paidPayment(service, shop, { order: { amount: '10.00' } });
    await refundPayment(crashing(fault), shop.merchant_key, { payment_id: paid.paymentId, amount: '4.00' }).catch(() => undefined);
    const moved = (await ledger(paid.paymentId)).some((r) => r.operation === 'refund' && r.outcome === 'approved');
    expect((await storedPayment(service, paid.paymentId)).refunds).not.toEqual({});

    await reconcileAfter(3 * MINUTE);
    const p = await storedPayment(service, paid.paymentId);
    expect(p.refunds).toEqual({});
    expect(p.refundedMinor ?? 0).toBe(moved ? 400 : 0);
    await agrees(paid.paymentId);
    // With nothing refunded the payment can still be voided; with a refund it cannot.
    const voided = await voidOf<{ status: string }>(service, shop, paid.paymentId);
    expect(voided.json.status).toBe(moved ? 'FAIL' : 'SUCCESS');
    await agrees(paid.paymentId);
  });
});

describe('4. an abandoned 3-D Secure challenge', () => {
  it('once the reconciler declined it, the challenge can no longer be answered; nothing was charged', async () => {
    const session = await openSession(service, shop, { extra: { session_expiry: 30 } });
    await submitPage(service, session, { card: '05/38' });
    const challenged = await storedPayment(service, session.paymentId);
    expect(challenged.status).toBe('3ds');
    await reconcileAfter(31 * MINUTE);
    const declined = await storedPayment(service, session.paymentId);
    expect(declined).toMatchObject({ status: 'decline', reason: ABANDONED_REASON });

    const key = challenged.action?.idempotencyKey ?? '';
    await service.deps.sandbox.challenges.answerChallenge(key, { code: SANDBOX_OTP, confirm: true });
    expect((await ledger(session.paymentId)).filter((r) => r.outcome === 'approved')).toEqual([]);
    await reconcileAfter(25 * 60 * MINUTE);
    await expect(statusOf(service, shop, session.paymentId)).resolves.toMatchObject({ status: 'decline' });
    await agrees(session.paymentId);
  });

  it('an acquirer that cannot close the challenge approves it late: the approval is reversed and both are recorded', async () => {
    const session = await openSession(service, shop, { extra: { session_expiry: 30 } });
    await submitPage(service, session, { card: '05/38' });
    const challenged = await storedPayment(service, session.paymentId);
    const real = service.deps.acquirer;
    const cannotClose: Acquirer = new Proxy(real, {
      get: (obj, prop, receiver) => (prop === 'close' ? async (ref: Parameters<Acquirer['close']>[0]) => (await obj.lookup(ref)) ?? { kind: 'unknown', acquirerRef: '', reason: 'cannot close' } : Reflect.get(obj, prop, receiver)),
    });
    const deps = { ...service.deps, acquirer: cannotClose } as Deps;
    clock.set(new Date(T0.getTime() + 31 * MINUTE));
    await reconcileDue(deps);
    expect(await storedPayment(service, session.paymentId)).toMatchObject({ status: 'decline', reason: ABANDONED_REASON });

    await service.deps.sandbox.challenges.answerChallenge(challenged.action?.idempotencyKey ?? '', { code: SANDBOX_OTP, confirm: true });
    clock.set(new Date(T0.getTime() + 50 * MINUTE));
    await reconcileDue(deps);
    const p = await storedPayment(service, session.paymentId);
    expect(p.status).toBe('decline');
    expect(p.transactions.slice(-2).map((t) => [t.type, t.status, Boolean(t.internal)])).toEqual([
      ['sale', 'success', true],
      ['reversal', 'success', false],
    ]);
    expect((await ledger(session.paymentId)).filter((r) => r.outcome === 'approved').map((r) => r.operation)).toEqual(['sale', 'reversal']);
    await agrees(session.paymentId);
  });
});

describe('5. recurring replay by letter case', () => {
  it('sub-abc-1, SUB-ABC-1 and Sub-abc-1 are one request: one charge', async () => {
    const chain = await recurringChain(service, shop);
    const answers = [];
    for (const number of ['sub-abc-1', 'SUB-ABC-1', 'Sub-abc-1']) {
      const body = recurringBody(shop, { initTransId: chain.initTransId, token: chain.token, order: { number, amount: '10.00', description: 'Monthly box' } });
      answers.push(await service.signedPost<{ payment_id: string; status: string }>('/api/v1/payment/recurring', body, shop.password));
    }
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => a.json.payment_id)).size).toBe(1);
    expect((await ledger(answers[0]!.json.payment_id)).filter((r) => r.operation === 'recurring')).toHaveLength(1);
  });
});

describe('never a 5xx once the acquirer approved', () => {
  it('a recurring charge whose record cannot be written answers the acquirer\'s outcome; the reconciler records it', async () => {
    const chain = await recurringChain(service, shop);
    const parts = withFault(service.deps.store, service.deps.acquirer, { at: 'write', nth: 2, when: 'before' });
    const outage = { ...service.deps, store: parts.store, acquirer: parts.acquirer } as Deps;
    const { chargeRecurring } = await import('../../lambdas/use-cases/recurring-payment');
    const answer = await chargeRecurring(outage, shop.merchant_key, {
      merchant_key: shop.merchant_key,
      recurring_init_trans_id: chain.initTransId,
      recurring_token: chain.token,
      hash: 'verified-by-the-edge',
      order: { number: 'outage-1', amount: '10.00', description: 'Monthly box' },
    });
    expect(answer).toMatchObject({ status: 'settled' });
    expect((await storedPayment(service, answer.payment_id)).status).toBe('prepare');
    await reconcileAfter(3 * MINUTE);
    expect((await storedPayment(service, answer.payment_id)).status).toBe('settled');
    await agrees(answer.payment_id);
  });
});

describe('6. amount renderings', () => {
  it('a refund signed over "10" is not accepted with 10.49; one signed over 10.5 or "10.50" is accepted with 10.5', async () => {
    const paid = await paidPayment(service, shop, { order: { amount: '100.00' } });
    const signed = (signedAmount: string, amount: number) => ({
      merchant_key: shop.merchant_key,
      payment_id: paid.paymentId,
      amount,
      hash: signFields([paid.paymentId, signedAmount], shop.password),
    });
    const forged = await service.post('/api/v1/payment/refund', signed('10', 10.49));
    expect(forged.status).toBe(400);
    expect((await service.post('/api/v1/payment/refund', signed('10.5', 10.5))).status).toBe(200);
    expect((await service.post('/api/v1/payment/refund', signed('10.50', 10.5))).status).toBe(200);
    await reconcileAfter(3 * MINUTE);
    expect((await storedPayment(service, paid.paymentId)).refundedMinor).toBe(2100);
  });
});

describe('Idempotency-Key', () => {
  const withKey = (path: string, body: Record<string, unknown>, key: string) =>
    service.request<Record<string, unknown>>({
      path,
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(signBody(path, body, shop.password)),
    });

  it('a retried partial refund with the same key refunds once; another body with it is 409', async () => {
    const paid = await paidPayment(service, shop, { order: { amount: '10.00' } });
    const body = { merchant_key: shop.merchant_key, payment_id: paid.paymentId, amount: '3.00' };
    const answers = await Promise.all(Array.from({ length: 5 }, () => withKey('/api/v1/payment/refund', body, 'refund-order-1-a')));
    // Each is the first answer, or "in progress" (208012) while the first run holds the key.
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.json])).toEqual(answers.filter((a) => a.status !== 200).map(() => [409, refusal(208012, 'OPERATION_IN_PROGRESS')]));
    const again = await withKey('/api/v1/payment/refund', body, 'refund-order-1-a');
    expect(again.json).toEqual({ payment_id: paid.paymentId, result: 'accepted' });
    const other = await withKey('/api/v1/payment/refund', { ...body, amount: '4.00' }, 'refund-order-1-a');
    expect([other.status, other.json]).toEqual([409, refusal(400, 'DUPLICATE_REQUEST')]);
    await reconcileAfter(3 * MINUTE);
    expect((await storedPayment(service, paid.paymentId)).refundedMinor).toBe(300);
    expect((await ledger(paid.paymentId)).filter((r) => r.operation === 'refund')).toHaveLength(1);
    await agrees(paid.paymentId);
  });

  it('a retry after a crash between the acquirer and our record lands on the first refund', async () => {
    const paid = await paidPayment(service, shop, { order: { amount: '10.00' } });
    const parts = withFault(service.deps.store, service.deps.acquirer, { at: 'write', nth: 2, when: 'before' });
    const crashed = { ...service.deps, store: parts.store, acquirer: parts.acquirer } as Deps;
    const body = { merchant_key: shop.merchant_key, payment_id: paid.paymentId, amount: '2.00' };
    // The first run, as the handler would run it with the key's transaction id, dies after the acquirer refunded.
    const { requestKeyOf } = await import('../../lambdas/domain/request-key');
    const key = requestKeyOf(shop.merchant_key, 'POST /api/v1/payment/refund', 'crash-key-1', body);
    await refundPayment(crashed, shop.merchant_key, body, { transId: key.transId }).catch(() => undefined);
    const retried = await withKey('/api/v1/payment/refund', body, 'crash-key-1');
    expect(retried.status).toBe(200);
    await reconcileAfter(3 * MINUTE);
    expect((await ledger(paid.paymentId)).filter((r) => r.operation === 'refund')).toHaveLength(1);
    expect((await storedPayment(service, paid.paymentId)).refundedMinor).toBe(200);
    await agrees(paid.paymentId);
  });

  it('a void replayed with its key answers its first outcome', async () => {
    const paid = await paidPayment(service, shop);
    const body = { merchant_key: shop.merchant_key, payment_id: paid.paymentId };
    const first = await withKey('/api/v1/payment/void', body, 'void-1');
    const replay = await withKey('/api/v1/payment/void', body, 'void-1');
    expect(first.json).toMatchObject({ status: 'SUCCESS', payment_status: 'void' });
    expect(replay.json).toMatchObject({ status: 'SUCCESS', payment_status: 'void' });
    const without = await voidOf(service, shop, paid.paymentId);
    expect(without.status).toBe(409);
  });

  it('a session replayed with its key gives the same link; keys are per merchant', async () => {
    const other = await service.createMerchant({ name: 'Other Shop' });
    const body = { merchant_key: shop.merchant_key, operation: 'purchase', success_url: 'https://shop.example/ok', order: { number: 'key-1', amount: '5.00', currency: 'USD', description: 'Key test' }, customer: { name: 'A B', email: 'a@b.example' } };
    const a = await withKey('/api/v1/session', body, 'session-1');
    const b = await withKey('/api/v1/session', body, 'session-1');
    expect(a.status).toBe(200);
    expect(b.json).toEqual(a.json);
    const otherBody = { ...body, merchant_key: other.merchant_key };
    const c = await service.request<Record<string, unknown>>({
      path: '/api/v1/session',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'session-1' },
      body: JSON.stringify(signBody('/api/v1/session', otherBody, other.password)),
    });
    expect(c.status).toBe(200);
    expect(c.json).not.toEqual(a.json);
  });

  it.each(['', 'x'.repeat(256), 'tab\there'])('refuses a malformed key %j with the 400 envelope', async (key) => {
    const paid = await paidPayment(service, shop);
    const res = await withKey('/api/v1/payment/void', { merchant_key: shop.merchant_key, payment_id: paid.paymentId }, key);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.json)).toContain('Idempotency-Key');
  });
});
