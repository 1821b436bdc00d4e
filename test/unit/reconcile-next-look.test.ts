import { readConfig } from '../../lambdas/config';
import type { Payment } from '../../lambdas/domain/payment';
import { nextLook } from '../../lambdas/use-cases/reconcile';

const NOW = new Date('2030-01-01T12:00:00.000Z');
const MINUTE = 60_000;
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const policy = (retryLaterMs?: number) => ({ policy: { authorizationValidityMs: 7 * 24 * 60 * MINUTE, reconcileAfterMs: 2 * MINUTE, ...(retryLaterMs === undefined ? {} : { retryLaterMs }) } });
/** A settled payment with one refund in flight since `startedAt`: what the reconciler refiles. */
const refunding = (startedAt: string) =>
  ({ paymentId: 'p', status: 'settled', refunds: { r1: { transId: 'r1', amountMinor: 100, startedAt } } }) as unknown as Payment;

describe('when the reconciler looks at a payment again', () => {
  it('a refund not yet due keeps the time it is due at, whatever the retry setting', () => {
    expect(nextLook(policy(5_000), refunding(ago(30_000)), NOW).toISOString()).toBe(new Date(NOW.getTime() + 90_000).toISOString());
  });

  it('an overdue refund still in flight is looked at again after RECONCILE_RETRY_SECONDS', () => {
    expect(nextLook(policy(5_000), refunding(ago(10 * MINUTE)), NOW).getTime()).toBe(NOW.getTime() + 5_000);
    expect(nextLook(policy(300_000), refunding(ago(10 * MINUTE)), NOW).getTime()).toBe(NOW.getTime() + 5 * MINUTE);
  });

  it('without the setting in its policy, after five minutes', () => {
    expect(nextLook(policy(), refunding(ago(10 * MINUTE)), NOW).getTime()).toBe(NOW.getTime() + 5 * MINUTE);
  });
});

describe('RECONCILE_RETRY_SECONDS', () => {
  const base = { TABLE_NAME: 't', MERCHANT_SECRET_PREFIX: 'checkout/merchants/' };

  it('is 300 by default and read as whole seconds from 1 to 3600', () => {
    expect(readConfig(base).RECONCILE_RETRY_SECONDS).toBe(300);
    expect(readConfig({ ...base, RECONCILE_RETRY_SECONDS: '5' }).RECONCILE_RETRY_SECONDS).toBe(5);
    for (const bad of ['0', '3601', '1.5', 'soon']) expect(() => readConfig({ ...base, RECONCILE_RETRY_SECONDS: bad })).toThrow(/RECONCILE_RETRY_SECONDS/);
  });
});
