import { awaitsAnotherAttempt } from './attempts';
import type { MonthTally } from './dispute-rates';
import type { Payment, PaymentStatus, Transaction } from './payment';
import { refusalOf } from './state-machine';

/**
 * The chargeback rate's denominator, derived from the payments themselves (ADR 0043): a merchant's
 * month is its payments created that month (UTC days) whose money settled, however late it settled
 * (a DMS capture across the month's end counts in the month the customer paid, as the card schemes'
 * monthly ratios do). It is counted day by day from the merchant's payments of each day; a day that
 * has ended keeps its figure, with the few payments of it that may still settle, so a later reading
 * reads those again instead of the whole day. Pure: the caller passes the time.
 */

/**
 * The statuses a payment whose money settled can have. It stays counted whatever followed (a refund,
 * a void in its window, a chargeback): the sale was made in its month, as the scheme counts it.
 * Never counted: an authorization not captured (`pending`), one released or reversed (`reversal`),
 * a decline, and a link not paid.
 */
export const SETTLED_SINCE: readonly PaymentStatus[] = ['settled', 'refund', 'void', 'chargeback'];

/** The transactions that settle money: a sale, a recurring charge, a capture of an authorization. */
const SETTLING: readonly Transaction['type'][] = ['sale', 'recurring', 'capture'];

/**
 * What a payment counts for in its month: its currency and the amount its settling transaction
 * settled (a capture's may be part of the order), or nothing. The transaction is the one that left
 * the payment settled (`orderStatus`, stamped on every transaction): an authorization's approval
 * left it `pending`, and a late approval kept for the ledger (`internal`) settled nothing.
 */
export function settledSale(p: Pick<Payment, 'status' | 'order' | 'transactions'>): { readonly currency: string; readonly amountMinor: number } | undefined {
  if (!SETTLED_SINCE.includes(p.status)) return undefined;
  const tx = p.transactions.find((t) => t.status === 'success' && !t.internal && SETTLING.includes(t.type) && t.orderStatus === 'settled');
  return tx ? { currency: p.order.currency, amountMinor: tx.amountMinor } : undefined;
}

/**
 * Whether a payment that has not settled may still settle: an attempt or an operation waiting for the
 * acquirer's answer, a challenge the customer is completing, an authorization not yet captured or
 * released, a link still open (unpaid, or declined with attempts left), a soft-declined
 * merchant-initiated payment its merchant may retry. Such a payment keeps its day open.
 */
export function maySettleLater(p: Payment, now: Date): boolean {
  if (settledSale(p)) return false;
  if (p.inFlight || p.action || p.operation) return true;
  switch (p.status) {
    case 'pending':
    case '3ds':
    case 'redirect':
      return true;
    case 'prepare':
      return p.checkout !== undefined && Date.parse(p.checkout.expiresAt) > now.getTime();
    case 'decline':
      return awaitsAnotherAttempt(p, now) || refusalOf('retry', p) === undefined;
    default:
      return false;
  }
}

/** A merchant's payments of one day whose money settled: how many, how much per currency, and those that may still settle. */
export interface DayFigure {
  readonly settledCount: number;
  readonly settledMinor: Readonly<Record<string, number>>;
  /** Ids of the day's payments that have not settled and may still (maySettleLater). */
  readonly open: readonly string[];
}

export const NOTHING_SETTLED: DayFigure = { settledCount: 0, settledMinor: {}, open: [] };

/**
 * A figure with these payments counted: each settled one added, each that may still settle kept open,
 * the rest (at rest without settling) left out. To count open payments read again, pass the figure
 * without them: one not found any more (an abandoned link the TTL removed) simply drops out.
 */
export function withPayments(figure: DayFigure, payments: readonly Payment[], now: Date): DayFigure {
  let settledCount = figure.settledCount;
  const settledMinor: Record<string, number> = { ...figure.settledMinor };
  const open = [...figure.open];
  for (const p of payments) {
    const sale = settledSale(p);
    if (sale) {
      settledCount += 1;
      settledMinor[sale.currency] = (settledMinor[sale.currency] ?? 0) + sale.amountMinor;
    } else if (maySettleLater(p, now)) open.push(p.paymentId);
  }
  return { settledCount, settledMinor, open };
}

/** Whether two figures say the same (a figure read again that changed nothing is not written again). */
export const sameFigure = (a: DayFigure, b: DayFigure): boolean =>
  a.settledCount === b.settledCount &&
  JSON.stringify(Object.entries(a.settledMinor).sort()) === JSON.stringify(Object.entries(b.settledMinor).sort()) &&
  JSON.stringify([...a.open].sort()) === JSON.stringify([...b.open].sort());

/**
 * How long after a day ends it is closed: every payment created that day is in the search index by
 * then (a payment's creation time is taken before its write, and the index follows the table).
 */
export const DAY_CLOSES_AFTER_MS = 10 * 60_000;

const DAY_MS = 24 * 3600_000;

/**
 * The days (`YYYY-MM-DD`, UTC) of a month up to `now`, each closed or not: a closed day's figure is
 * kept; the others (today, and a day that ended less than DAY_CLOSES_AFTER_MS ago) are counted afresh.
 */
export function daysOfMonth(month: string, now: Date): { readonly day: string; readonly closed: boolean }[] {
  const days: { day: string; closed: boolean }[] = [];
  for (let start = Date.parse(`${month}-01T00:00:00.000Z`); new Date(start).toISOString().startsWith(month) && start <= now.getTime(); start += DAY_MS) {
    days.push({ day: new Date(start).toISOString().slice(0, 10), closed: start + DAY_MS + DAY_CLOSES_AFTER_MS <= now.getTime() });
  }
  return days;
}

/** A merchant's month from its days' figures; `complete` when every day of the month so far was counted. */
export function monthTallyOf(merchantKey: string, month: string, figures: readonly DayFigure[], complete: boolean): MonthTally {
  const settledMinor: Record<string, number> = {};
  for (const f of figures) for (const [currency, minor] of Object.entries(f.settledMinor)) settledMinor[currency] = (settledMinor[currency] ?? 0) + minor;
  return { merchantKey, month, settledCount: figures.reduce((n, f) => n + f.settledCount, 0), settledMinor, complete };
}
