import type { DisputeEntry, MonthTally } from '../domain/dispute-rates';
import type { DayFigure } from '../domain/settled-days';

export type { DayFigure, DisputeEntry, MonthTally };

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

/**
 * The figures of a merchant's closed days, as the chargeback rate's denominator counted them from its
 * payments (domain/settled-days.ts), kept so a day is counted once.
 */
export interface SettledDays {
  /** The figures kept of a merchant's month (`YYYY-MM`), by day (`YYYY-MM-DD`); a day never kept is absent. */
  ofMonth(merchantKey: string, month: string): Promise<ReadonlyMap<string, DayFigure>>;
  /** Keeps a closed day's figure, replacing the one kept before (the same day counted again says the same or more). */
  keep(merchantKey: string, day: string, figure: DayFigure): Promise<void>;
}
