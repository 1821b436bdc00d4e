import fc from 'fast-check';
import type { Payment } from '../../lambdas/domain/payment';
import type { Acquirer, FollowUpOutcome } from '../../lambdas/ports/acquirer';
import { ManualClock } from '../../lambdas/ports/clock';
import type { Ids } from '../../lambdas/ports/ids';
import { DEFAULT_SETTINGS, type Merchant, type MerchantDirectory } from '../../lambdas/ports/merchants';
import { MemoryPaymentStore } from '../../lambdas/adapters/memory/payment-store';
import { AUTO_CAPTURE_ACTOR, EXPIRED_REASON, STALE_CLAIM_MS, runCaptureJob } from '../../lambdas/use-cases/capture-job';
import { QUEUES, nextCaptureEvent } from '../../lambdas/use-cases/record-outcome';

/**
 * When the capture job looks at an authorization, and what it does then. The rules only: the
 * store is the in-memory one here (test/integration/capture-job.test.ts runs the same job on
 * the real DynamoDB engine).
 */
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const T0 = new Date('2030-04-01T06:00:00.000Z');
const at = (offsetMs: number) => new Date(T0.getTime() + offsetMs);

describe('nextCaptureEvent: the automatic capture, else the expiry, whichever comes first', () => {
  const expiry = at(7 * DAY);
  it.each([
    ['manual capture (no delay)', undefined, expiry],
    ['a zero-minute delay: at once', 0, T0],
    ['a 30-minute delay', 30, at(30 * MINUTE)],
    ['a delay ending a minute before expiry', 7 * 24 * 60 - 1, at(7 * DAY - MINUTE)],
    ['a delay ending exactly at expiry', 7 * 24 * 60, expiry],
    ['a delay longer than the validity', 8 * 24 * 60, expiry],
  ])('%s', (_case, delay, expected) => {
    expect(nextCaptureEvent(T0, delay, expiry)).toEqual(expected);
  });

  it('is never after the expiry, never before the authorization, and is the capture time whenever that comes first', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 * 7 * 24 * 60 }), fc.integer({ min: 1, max: 30 }), fc.boolean(), (delay, validityDays, manual) => {
        const expiresAt = at(validityDays * DAY);
        const next = nextCaptureEvent(T0, manual ? undefined : delay, expiresAt);
        expect(next.getTime()).toBeLessThanOrEqual(expiresAt.getTime());
        expect(next.getTime()).toBeGreaterThanOrEqual(T0.getTime());
        const captureAt = T0.getTime() + delay * MINUTE;
        expect(next.getTime()).toBe(!manual && captureAt < expiresAt.getTime() ? captureAt : expiresAt.getTime());
      }),
    );
  });
});

function world(merchant: Partial<Merchant> = {}, captureOutcome: FollowUpOutcome = { kind: 'approved', acquirerRef: 'cap-1' }) {
  const store = new MemoryPaymentStore();
  let made = 0;
  const creating: Promise<void>[] = [];
  const clock = new ManualClock(T0);
  const settings: Merchant = { ...DEFAULT_SETTINGS, dms: true, merchantKey: 'shop', createdAt: T0.toISOString(), updatedAt: T0.toISOString(), ...merchant };
  const merchants: MerchantDirectory = {
    find: async () => settings,
    save: async () => undefined,
    create: async () => true,
    list: async () => [settings],
    markWebhookSecretRotated: async () => undefined,
  };
  const captures: number[] = [];
  const refuse = () => Promise.reject(new Error('not used by the job'));
  const acquirer: Acquirer = {
    authorize: refuse,
    completeAction: refuse,
    lookup: refuse,
    chargebacks: refuse,
    close: refuse,
    void: refuse,
    refund: refuse,
    reverse: async () => ({ kind: 'approved', acquirerRef: 'rev-1' }),
    capture: async (r) => {
      captures.push(r.amountMinor);
      return captureOutcome;
    },
  };
  let n = 0;
  const ids: Ids = { paymentId: () => `p-${++n}`, transId: () => `t-${++n}`, linkSecret: () => Buffer.alloc(18), longToken: () => 'x'.repeat(64) };
  /** An authorization made at T0, valid 7 days, queued as record-outcome queues it. */
  const authorize = (extra: Partial<Payment> = {}, queuedAt?: Date): Payment => {
    const expiresAt = at(7 * DAY);
    const payment: Payment = {
      paymentId: `pay-${++made}`,
      merchantKey: 'shop',
      status: 'pending',
      order: { number: 'o-1', amount: '25.00', amountMinor: 2500, currency: 'USD', description: 'Gift' },
      customer: { name: 'John Doe' },
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
      paidAt: T0.toISOString(),
      transactions: [{ transId: 'sale-1', type: 'sale', status: 'success', amountMinor: 2500, at: T0.toISOString() }],
      authorization: { idempotencyKey: 'auth-1', acquirerRef: 'ref-1' },
      authorizationExpiresAt: expiresAt.toISOString(),
      ...extra,
    };
    const dueAt = queuedAt ?? nextCaptureEvent(T0, settings.autoCaptureDelayMinutes, expiresAt);
    creating.push(store.createPayment(payment, { name: QUEUES.capture, dueAt: dueAt.toISOString() }));
    return payment;
  };
  const run = async (when: Date, maxPayments?: number) => {
    await Promise.all(creating.splice(0));
    clock.set(when);
    return runCaptureJob({ store, merchants, acquirer, clock, ids }, maxPayments === undefined ? {} : { maxPayments });
  };
  const state = (id: string) => ({ payment: store.snapshot(id) as Payment, queuedUntil: store.queueOf(id)?.dueAt });
  return { store, authorize, run, state, captures };
}

describe('runCaptureJob: what happens to an authorization when it comes due', () => {
  it('captures the full amount once the delay has passed, and takes it out of the queue', async () => {
    const w = world({ autoCaptureDelayMinutes: 30 });
    const p = w.authorize();
    expect(await w.run(at(30 * MINUTE))).toMatchObject({ examined: 1, captured: 1 });
    const { payment, queuedUntil } = w.state(p.paymentId);
    expect(payment).toMatchObject({ status: 'settled', capturedMinor: 2500 });
    expect(payment.transactions.at(-1)).toMatchObject({ type: 'capture', status: 'success', actor: AUTO_CAPTURE_ACTOR });
    expect(queuedUntil).toBeUndefined();
    expect(w.captures).toEqual([2500]);
  });

  it.each([
    ['a longer delay', { autoCaptureDelayMinutes: 90 }, at(90 * MINUTE)],
    ['manual capture', {}, at(7 * DAY)],
  ])('queues it again for its next event when the merchant has changed to %s since it was queued', async (_case, merchant, next) => {
    const w = world(merchant);
    const p = w.authorize({}, at(30 * MINUTE));
    expect(await w.run(at(30 * MINUTE))).toMatchObject({ examined: 1, skipped: 1, captured: 0 });
    expect(w.state(p.paymentId)).toMatchObject({ payment: { status: 'pending' }, queuedUntil: next.toISOString() });
    expect(w.captures).toEqual([]);
  });

  it('releases it at expiry (status reversal), even when its capture is due too', async () => {
    const w = world({ autoCaptureDelayMinutes: 0 });
    const p = w.authorize();
    expect(await w.run(at(7 * DAY))).toMatchObject({ released: 1, captured: 0 });
    const { payment, queuedUntil } = w.state(p.paymentId);
    expect(payment).toMatchObject({ status: 'reversal', reason: EXPIRED_REASON });
    expect(payment.transactions.at(-1)).toMatchObject({ type: 'reversal', actor: 'system:authorization-expiry' });
    expect(queuedUntil).toBeUndefined();
    expect(w.captures).toEqual([]);
  });

  it('leaves a declined capture pending and queues it for its expiry only (no automatic retry)', async () => {
    const w = world({ autoCaptureDelayMinutes: 0 }, { kind: 'declined', acquirerRef: 'cap-1', reason: 'Capture declined by processing.' });
    const p = w.authorize();
    expect(await w.run(at(MINUTE))).toMatchObject({ declined: 1 });
    expect(w.state(p.paymentId)).toMatchObject({ payment: { status: 'pending', reason: 'Capture declined by processing.' }, queuedUntil: at(7 * DAY).toISOString() });
    expect(await w.run(at(DAY))).toMatchObject({ examined: 0 });
    expect(w.captures).toHaveLength(1);
  });

  it.each(['settled', 'reversal', 'void', 'refund'] as const)('takes a payment that is %s by now out of the queue without acting', async (status) => {
    const w = world({ autoCaptureDelayMinutes: 0 });
    const p = w.authorize({ status });
    expect(await w.run(at(MINUTE))).toMatchObject({ examined: 1, skipped: 1 });
    expect(w.state(p.paymentId)).toMatchObject({ payment: { status }, queuedUntil: undefined });
    expect(w.captures).toEqual([]);
  });

  it('leaves a capture or release someone else has in flight alone (the reconciler finishes it)', async () => {
    const w = world({ autoCaptureDelayMinutes: 0 });
    const op = { kind: 'capture' as const, transId: 'op-1', amountMinor: 1000, idempotencyKey: 'p.capture.op-1', startedAt: at(MINUTE).toISOString(), actor: 'operator:alice' };
    const p = w.authorize({ operation: op }, at(MINUTE));
    expect(await w.run(at(MINUTE + STALE_CLAIM_MS))).toMatchObject({ examined: 1, skipped: 1 });
    expect(w.captures).toEqual([]);
    expect(w.state(p.paymentId).payment.operation).toEqual(op);
  });

  it('a run cut short handles the longest-due first', async () => {
    const w = world({ autoCaptureDelayMinutes: 0 });
    const ps = [3, 1, 2].map((m) => w.authorize({}, at(m * MINUTE)));
    expect(await w.run(at(10 * MINUTE), 2)).toMatchObject({ examined: 2, captured: 2 });
    expect(ps.map((p) => w.state(p.paymentId).payment.status)).toEqual(['pending', 'settled', 'settled']);
  });
});
