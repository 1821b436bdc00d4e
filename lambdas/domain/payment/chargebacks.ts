import { refusalOf, TRANSITIONS } from '../state-machine';
import type { Transition } from './change';
import type { Payment, Transaction } from './model';
import { QUEUES } from './queues';
import { refundableMinor } from './refunds';

/**
 * Chargebacks: the cardholder's bank takes money back from the merchant through the acquirer. Not an
 * operation of ours (nothing is asked of the acquirer): an event its ledger reports, recorded once
 * each. The n-th chargeback the acquirer reports is our transaction `<payment>.cb<n>`; recording it
 * is guarded by that id being new, so however many readings of the acquirer run at once, each
 * chargeback is recorded once and the payment's total is the acquirer's (docs/adr/0034).
 */
export interface Chargeback {
  readonly amountMinor: number;
  /** The card scheme's reason code as the acquirer gives it (e.g. `4837`); unknown when it gave none. */
  readonly reasonCode?: string;
  /** When the chargeback was raised, and the bank's date of it (`YYYY-MM-DD`), when the acquirer said. */
  readonly chargebackDate?: string;
  readonly bankDate?: string;
}

/** What was charged back so far. */
export const chargedBackMinor = (p: Pick<Payment, 'chargedBackMinor'>): number => p.chargedBackMinor ?? 0;

/** What a chargeback may take at most: what was captured, less what was refunded and charged back. */
export const chargeableMinor = (p: Pick<Payment, 'capturedMinor' | 'order' | 'refundedMinor' | 'chargedBackMinor'>): number =>
  refundableMinor(p) - (p.refundedMinor ?? 0) - chargedBackMinor(p);

/** The transaction id of a payment's n-th chargeback (1-based). */
export const chargebackTransId = (paymentId: string, n: number): string => `${paymentId}.cb${n}`;

/** The chargebacks recorded on a payment, oldest first. */
export const recordedChargebacks = (p: Pick<Payment, 'transactions'>): Transaction[] => p.transactions.filter((t) => t.type === 'chargeback');

/** Why a chargeback cannot be recorded on the payment as read. */
export type ChargebackRefusal = 'CHARGEBACK_NOT_SETTLED' | 'CHARGEBACK_AMOUNT_TOO_BIG';

/**
 * Records the acquirer's n-th chargeback of a payment. The payment reads `chargeback` from then on,
 * full or partial (the amount is the total charged back beside the refunded one), and takes no more
 * refunds or voids; a refund already in flight is answered as the acquirer answers it. Guarded by the
 * refunded and charged-back totals it was computed from, so it never takes more than was captured
 * less what was refunded (208010).
 */
export function recordChargeback(p: Payment, n: number, chargeback: Chargeback, acquirerRef: string | undefined, now: Date): Transition | { readonly refused: ChargebackRefusal } {
  if (refusalOf('chargeback', p)) return { refused: 'CHARGEBACK_NOT_SETTLED' };
  if (!(chargeback.amountMinor > 0) || chargeback.amountMinor > chargeableMinor(p)) return { refused: 'CHARGEBACK_AMOUNT_TOO_BIG' };
  const transId = chargebackTransId(p.paymentId, n);
  const at = now.toISOString();
  const tx: Transaction = {
    transId,
    type: 'chargeback',
    status: 'success',
    amountMinor: chargeback.amountMinor,
    at,
    ...(acquirerRef ? { acquirerRef } : {}),
    ...(chargeback.reasonCode ? { reason: chargeback.reasonCode } : {}),
    dispute: {
      ...(chargeback.reasonCode ? { reasonCode: chargeback.reasonCode } : {}),
      ...(chargeback.chargebackDate ? { chargebackDate: chargeback.chargebackDate } : {}),
      ...(chargeback.bankDate ? { bankDate: chargeback.bankDate } : {}),
    },
  };
  return {
    guard: { statusIn: TRANSITIONS.chargeback.from, refundedIs: p.refundedMinor ?? 0, chargedBackIs: chargedBackMinor(p), newTransaction: transId },
    change: { set: { status: 'chargeback', updatedAt: at }, add: { chargedBackMinor: chargeback.amountMinor }, append: [tx], keep: true },
  };
}

/** Whether the acquirer has news of a dispute not read yet. */
export const disputeNewsUnread = (p: Pick<Payment, 'disputeNews' | 'disputesRead'>): boolean => (p.disputeNews ?? 0) > (p.disputesRead ?? 0);

/**
 * The acquirer has news of a dispute on a payment (a chargeback notification, its own report):
 * counted, and the payment due in the reconcile queue now, where the reconciler reads its
 * chargebacks from the acquirer. Whatever our status: the acquirer may have settled a payment whose
 * answer we have not recorded yet; the news waits until we have.
 */
export const noteDisputeNews = (now: Date): Transition => ({
  guard: {},
  change: { set: { updatedAt: now.toISOString() }, add: { disputeNews: 1 }, queue: { name: QUEUES.reconcile, dueAt: now.toISOString() } },
});

/** The news counted up to `news` was read (news counted since keeps the payment due: `disputeNewsUnread`). */
export const disputesRead = (p: Pick<Payment, 'updatedAt'>, news: number): Transition => ({
  guard: {},
  change: { set: { disputesRead: news, updatedAt: p.updatedAt } },
});

/**
 * When a settled payment's chargebacks are checked at the acquirer, in days after its money settled,
 * for an acquirer whose only word of a chargeback is a notification it may lose (S2S CARD): most
 * chargebacks come within weeks, the card schemes allow about 120 days. Four reads in a payment's
 * life; a notification that arrives makes the payment due at once anyway.
 */
export const DISPUTE_CHECK_DAYS = [1, 7, 30, 120] as const;
const DAY_MS = 24 * 3600_000;

/** When the money of a payment settled: its last successful sale, recurring charge or capture. */
export function moneySettledAt(p: Pick<Payment, 'transactions'>): Date | undefined {
  const settled = p.transactions.filter((t) => t.status === 'success' && (t.type === 'sale' || t.type === 'recurring' || t.type === 'capture' || t.type === '3ds' || t.type === 'redirect'));
  const last = settled[settled.length - 1];
  return last ? new Date(last.at) : undefined;
}

/** When the payment's next scheduled check of the acquirer's chargebacks is due; undefined: none. */
export function disputeCheckDueAt(p: Pick<Payment, 'status' | 'disputeChecks' | 'transactions'>): Date | undefined {
  if (p.disputeChecks === undefined || !TRANSITIONS.chargeback.from.includes(p.status)) return undefined;
  const days = DISPUTE_CHECK_DAYS[p.disputeChecks];
  const settledAt = moneySettledAt(p);
  return days === undefined || !settledAt ? undefined : new Date(settledAt.getTime() + days * DAY_MS);
}

/** The scheduled check number `done` (0-based) was made. */
export const disputeChecked = (p: Pick<Payment, 'updatedAt'>, done: number): Transition => ({
  guard: {},
  change: { set: { disputeChecks: done + 1, updatedAt: p.updatedAt } },
});
