import type { DisputeEntry, MonthTally } from '../domain/dispute-rates';

export type { DisputeEntry, MonthTally };

/** The chargebacks acquirers reported, by month (domain/dispute-rates.ts). */
export interface DisputeLog {
  /**
   * Writes a chargeback's entry: the same chargeback (transaction id) written again replaces its
   * entry, so a reader that records it after a crash or a lost race leaves one.
   */
  record(entry: DisputeEntry): Promise<void>;
  /** Every chargeback of a month (`YYYY-MM`), in no particular order. */
  ofMonth(month: string): Promise<DisputeEntry[]>;
}

/** Each merchant's settled payments per month: the chargeback rate's denominator. */
export interface SettlementTally {
  /** Counts one payment's settled money in its merchant's month (an atomic addition). */
  add(merchantKey: string, month: string, currency: string, amountMinor: number): Promise<void>;
  /** The merchants' tallies of a month; a merchant with nothing settled has none. */
  ofMonth(month: string, merchantKeys: readonly string[]): Promise<MonthTally[]>;
}
