import { monthOf, settledBy } from '../domain/dispute-rates';
import { logger } from '../observability/logger';
import type { SettlementTally } from '../ports/disputes';
import type { PaymentStore } from '../ports/payments';

/**
 * The payment store, with each transition that settles money counted in its merchant's month
 * (SettlementTally, the chargeback rate's denominator) once it is applied. The count is added after
 * the payment's write and is not part of it: a crash between the two leaves that payment uncounted
 * (a month's rate reads a little high, never low), and a failed addition is logged, never an error
 * of the payment's change, which has happened.
 */
export function tallyingSettlements(store: PaymentStore, tally: SettlementTally): PaymentStore {
  const apply: PaymentStore['apply'] = async (paymentId, transition) => {
    const applied = await store.apply(paymentId, transition);
    const settled = applied.applied ? settledBy(transition.change) : undefined;
    if (settled && applied.payment) {
      const { merchantKey, order } = applied.payment;
      await tally.add(merchantKey, monthOf(settled.at), order.currency, settled.amountMinor).catch((e: unknown) => {
        logger.warn('settled payment not counted in its month', { payment_id: paymentId, error: e as Error });
      });
    }
    return applied;
  };
  // Every other call goes to the store itself (bound to it, whatever its class keeps private).
  return new Proxy(store, {
    get: (target, name) => {
      if (name === 'apply') return apply;
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
