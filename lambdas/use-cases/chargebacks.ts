import { logger } from '../observability/logger';
import { telemetry } from '../observability/telemetry';
import { chargebackTransId, checkedAtRest, disputeChecked, disputesRead, noteDisputeNews, recordChargeback, recordedChargebacks, type Payment } from '../domain/payment';
import type { DisputeEntry } from '../domain/dispute-rates';
import type { Acquirer, AcquirerChargeback } from '../ports/acquirer';
import type { Clock } from '../ports/clock';
import type { DisputeLog } from '../ports/disputes';
import type { PaymentStore } from '../ports/payments';

export interface ChargebackDeps {
  readonly store: PaymentStore;
  readonly acquirer: Acquirer;
  readonly clock: Clock;
  readonly disputes: DisputeLog;
}

/** How many times a write that lost a race is decided again on the payment as it is now. */
const ROUNDS = 8;

/**
 * The acquirer has news of a dispute on a payment (its chargeback notification, or its report): the
 * news is noted on the payment and the payment made due in the reconcile queue now, where the
 * reconciler reads its chargebacks from the acquirer (`recordChargebacks`). `false` when the payment
 * is unknown.
 */
export async function noteDisputeNewsOf(deps: Pick<ChargebackDeps, 'store' | 'clock'>, paymentId: string): Promise<boolean> {
  const applied = await deps.store.apply(paymentId, noteDisputeNews(deps.clock.now()));
  if (!applied.applied) logger.warn('dispute news for a payment we do not have', { payment_id: paymentId });
  return applied.applied;
}

/**
 * Takes the acquirer's own dispute report (an acquirer that reports disputes rather than notifying
 * them: the sandbox), noting each payment's news; the news is taken from the report once noted.
 * Returns the payments noted.
 */
export async function takeDisputeReport(deps: ChargebackDeps, limit = 100): Promise<string[]> {
  if (!deps.acquirer.disputeNews) return [];
  const news = await deps.acquirer.disputeNews(deps.clock.now(), limit);
  const noted: string[] = [];
  for (const item of news) {
    if (await noteDisputeNewsOf(deps, item.paymentId)) noted.push(item.paymentId);
    await item.taken();
  }
  return [...new Set(noted)];
}

export type ChargebacksRead = 'recorded' | 'unchanged' | 'refused';

/**
 * Reads the payment's chargebacks from the acquirer and records each one it has that we have not:
 * its n-th as our `<payment>.cb<n>` (domain/payment/chargebacks.ts), so concurrent readers record
 * each once. Then notes the news read. A chargeback our records cannot take (more than is left of
 * the payment, 208010) is not recorded: logged and counted for an operator, as a divergence from
 * the acquirer's ledger would be. `refiled`: the scheduled check's write also filed the payment
 * for its next check (the reconciler's refile has nothing left to write).
 */
export async function recordChargebacks(deps: ChargebackDeps, paymentId: string, scheduled = false): Promise<{ readonly read: ChargebacksRead; readonly refiled: boolean }> {
  const payment = await deps.store.findPayment(paymentId);
  // An attempt or a challenge without our answer yet: the news waits for it (read unchanged).
  if (!payment || payment.inFlight || payment.action) return { read: 'unchanged', refiled: false };
  const news = payment.disputeNews ?? 0;
  const authorization = payment.authorization;
  let outcome: ChargebacksRead = 'unchanged';
  let p: Payment | undefined = payment;
  if (authorization) {
    let theirs: readonly AcquirerChargeback[];
    try {
      theirs = await deps.acquirer.chargebacks({ paymentId: payment.paymentId, idempotencyKey: authorization.idempotencyKey });
    } catch (e) {
      // The news stays unread: the payment stays in the reconcile queue and is asked about again.
      logger.warn('acquirer call failed', { error: e as Error });
      return { read: 'unchanged', refiled: false };
    }
    for (let lost = 0; p && lost < ROUNDS; ) {
      const recorded = recordedChargebacks(p).length;
      const next = theirs[recorded];
      if (!next) break;
      const transition = recordChargeback(p, recorded + 1, next, next.acquirerRef, deps.clock.now());
      if ('refused' in transition) {
        telemetry.chargebackRefused();
        logger.error('chargeback not recorded: our records cannot take it', { payment_id: p.paymentId, refusal: transition.refused, amount_minor: next.amountMinor, status: p.status });
        // The acquirer has it all the same: the operators' disputes view shows it, refused.
        await deps.disputes.record({ ...entryOf(p, next), transId: chargebackTransId(p.paymentId, recorded + 1), recordedAt: deps.clock.now().toISOString(), outcome: 'refused', refusal: transition.refused });
        outcome = 'refused';
        break;
      }
      const applied = await deps.store.apply(p.paymentId, transition);
      if (applied.applied) {
        telemetry.chargebackRecorded(next.amountMinor);
        outcome = 'recorded';
      } else lost++;
      p = applied.payment;
    }
  }
  // Each chargeback the payment holds has its entry in the disputes log, written (again) before the
  // news is marked read: a crash after recording one leaves the news unread, and the next reading
  // writes the entry. Written again, an entry is replaced (one per chargeback).
  if (p) for (const tx of recordedChargebacks(p)) await deps.disputes.record(recordedEntryOf(p, tx));
  if (p && news > (p.disputesRead ?? 0)) p = (await deps.store.apply(p.paymentId, disputesRead(p, news))).payment;
  let refiled = false;
  if (p && scheduled && payment.disputeChecks !== undefined) {
    // At rest, the check is counted and the payment filed for the next one in one write.
    const atRest = checkedAtRest(p, payment.disputeChecks, deps.clock.now());
    refiled = atRest !== undefined && (await deps.store.apply(p.paymentId, atRest)).applied;
    if (!refiled) await deps.store.apply(p.paymentId, disputeChecked(p, payment.disputeChecks));
  }
  return { read: outcome, refiled };
}

/** A chargeback of the acquirer's as the disputes log keeps it (without its id, time and outcome). */
const entryOf = (p: Payment, c: AcquirerChargeback): Omit<DisputeEntry, 'transId' | 'recordedAt' | 'outcome'> => ({
  paymentId: p.paymentId,
  merchantKey: p.merchantKey,
  amountMinor: c.amountMinor,
  currency: p.order.currency,
  ...(c.reasonCode ? { reasonCode: c.reasonCode } : {}),
  ...(c.chargebackDate ? { chargebackDate: c.chargebackDate } : {}),
  ...(c.bankDate ? { bankDate: c.bankDate } : {}),
});

/** The entry of a chargeback recorded on the payment, from its transaction. */
const recordedEntryOf = (p: Payment, tx: Payment['transactions'][number]): DisputeEntry => ({
  ...entryOf(p, { amountMinor: tx.amountMinor, ...tx.dispute }),
  transId: tx.transId,
  recordedAt: tx.at,
  outcome: 'recorded',
});
