/**
 * Disputes as operators watch them: each chargeback the acquirer reported (recorded on its payment
 * or refused by our records), and each merchant's chargeback rate of a month — chargebacks over
 * the payments created that month whose money settled (settled-days.ts), by count and by amount per
 * currency — which the card schemes' monitoring programmes start watching at about 0.9 %
 * (docs/chargebacks.md).
 */

/** One chargeback as the acquirer reported it, and what our records did with it. */
export interface DisputeEntry {
  /** `<payment_id>.cb<n>`: the payment's n-th chargeback at the acquirer. */
  readonly transId: string;
  readonly paymentId: string;
  readonly merchantKey: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly reasonCode?: string;
  /** The acquirer's dates (`YYYY-MM-DD`), when it gave them. */
  readonly chargebackDate?: string;
  readonly bankDate?: string;
  /** When our records took it (or refused it). */
  readonly recordedAt: string;
  /** Recorded on the payment, or refused by our records (a divergence for an operator: docs/chargebacks.md). */
  readonly outcome: 'recorded' | 'refused';
  /** The refusal's error name, when refused. */
  readonly refusal?: string;
}

/** A merchant's payments created in a month whose money settled: how many, and how much per currency. */
export interface MonthTally {
  readonly merchantKey: string;
  /** `YYYY-MM`, UTC. */
  readonly month: string;
  readonly settledCount: number;
  readonly settledMinor: Readonly<Record<string, number>>;
  /**
   * Every day of the month so far counted. A reading that ran out of time leaves the days it did not
   * reach out (the next reading goes on from the days it kept): a part count reads the rate high.
   */
  readonly complete: boolean;
}

/** A merchant's chargeback rate of a month. */
export interface MerchantRate {
  readonly merchantKey: string;
  readonly month: string;
  readonly settledCount: number;
  /** The settled payments were all counted (MonthTally.complete); a part count is never over the threshold. */
  readonly complete: boolean;
  readonly chargebackCount: number;
  /** Chargebacks over settled payments, in percent; undefined when nothing settled that month. */
  readonly countRatePercent?: number;
  /** Per currency: what settled, what was charged back, and the share in percent (undefined when nothing settled in it). */
  readonly amounts: readonly { readonly currency: string; readonly settledMinor: number; readonly chargedBackMinor: number; readonly ratePercent?: number }[];
  /** Whether the rate is at or over the threshold with enough payments settled for it to count. */
  readonly over: boolean;
}

/** When a rate counts: its threshold in percent, and the settled payments a month needs first. */
export interface RateRule {
  readonly thresholdPercent: number;
  readonly minSettled: number;
}

/** The month (`YYYY-MM`, UTC) of an ISO time or day. */
export const monthOf = (iso: string): string => iso.slice(0, 7);

/** The month before `YYYY-MM`. */
export function previousMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}

/** `YYYY-MM` and a real month. */
export const isMonth = (v: string): boolean => /^\d{4}-(0[1-9]|1[0-2])$/.test(v);

/**
 * The month a chargeback counts in: the acquirer's chargeback date when it gave one, else the day
 * our records took it. Fixed once known, so writing an entry again lands on the same one.
 */
export const disputeMonthOf = (e: Pick<DisputeEntry, 'chargebackDate' | 'recordedAt'>): string =>
  monthOf(e.chargebackDate && isMonth(monthOf(e.chargebackDate)) ? e.chargebackDate : e.recordedAt);

const percent = (part: number, whole: number): number | undefined => (whole > 0 ? Math.round((part / whole) * 100_000) / 1000 : undefined);

/**
 * Each merchant's rate of a month from its tally and the month's chargebacks (every one the acquirer
 * reported counts, recorded or refused: the scheme counts what the acquirer has). Merchants with
 * either appear; worst first. A merchant without a tally has nothing settled.
 */
export function ratesOf(month: string, tallies: readonly MonthTally[], disputes: readonly DisputeEntry[], rule: RateRule): MerchantRate[] {
  const merchants = new Set([...tallies.map((t) => t.merchantKey), ...disputes.map((d) => d.merchantKey)]);
  const rates = [...merchants].map((merchantKey): MerchantRate => {
    const tally = tallies.find((t) => t.merchantKey === merchantKey && t.month === month);
    const mine = disputes.filter((d) => d.merchantKey === merchantKey && disputeMonthOf(d) === month);
    const settledCount = tally?.settledCount ?? 0;
    const complete = tally?.complete ?? true;
    const charged: Record<string, number> = {};
    for (const d of mine) charged[d.currency] = (charged[d.currency] ?? 0) + d.amountMinor;
    const currencies = [...new Set([...Object.keys(tally?.settledMinor ?? {}), ...Object.keys(charged)])].sort();
    const amounts = currencies.map((currency) => {
      const settledMinor = tally?.settledMinor[currency] ?? 0;
      const chargedBackMinor = charged[currency] ?? 0;
      const ratePercent = percent(chargedBackMinor, settledMinor);
      return { currency, settledMinor, chargedBackMinor, ...(ratePercent !== undefined ? { ratePercent } : {}) };
    });
    const countRatePercent = percent(mine.length, settledCount);
    // Exact, in whole numbers (the threshold in thousandths of a percent): the rounded rate shown never decides.
    const over = complete && settledCount > 0 && settledCount >= rule.minSettled && mine.length * 100_000 >= Math.round(rule.thresholdPercent * 1000) * settledCount;
    return { merchantKey, month, settledCount, complete, chargebackCount: mine.length, ...(countRatePercent !== undefined ? { countRatePercent } : {}), amounts, over };
  });
  return rates.sort((a, b) => (b.countRatePercent ?? -1) - (a.countRatePercent ?? -1) || a.merchantKey.localeCompare(b.merchantKey));
}

/**
 * The highest rate among the merchants whose month counts (enough settled payments, all of them
 * counted: a part count would read high); 0 when none does.
 */
export const highestCountedRate = (rates: readonly MerchantRate[], rule: RateRule): number =>
  Math.max(0, ...rates.filter((r) => r.complete && r.settledCount >= rule.minSettled).map((r) => r.countRatePercent ?? 0));
