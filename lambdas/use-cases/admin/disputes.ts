import { invalidRequest } from '../../domain/errors';
import { highestCountedRate, isMonth, monthOf, previousMonth, ratesOf, type DisputeEntry, type MerchantRate, type RateRule } from '../../domain/dispute-rates';
import type { Config } from '../../config';
import type { DisputeLog } from '../../ports/disputes';
import type { MerchantDirectory } from '../../ports/merchants';
import { settledMonths, type CountBudget, type SettledMonthDeps } from '../settled-months';

/** What a month's rates read (the chargeback-rate job): the chargebacks, and the payments of the merchants charged back. */
export interface RateDeps extends SettledMonthDeps {
  readonly disputes: DisputeLog;
  readonly config: Pick<Config, 'CHARGEBACK_RATE_ALARM_PERCENT' | 'CHARGEBACK_RATE_MIN_SETTLED'>;
}

/** What the disputes view reads: the rates, and the merchants by name. */
export interface DisputeDeps extends RateDeps {
  readonly merchants: MerchantDirectory;
}

/** The merchants the disputes view names and filters by (the directory, by name). */
export const RATE_MERCHANTS = 1000;

export interface DisputeSearch {
  /** `YYYY-MM` (UTC); this month when not given. */
  readonly month?: string;
  /** A merchant's key or name, or part of its name (case-insensitive). */
  readonly merchant?: string;
  /** The scheme's reason code, exactly. */
  readonly reason?: string;
  readonly outcome?: string;
}

/** A chargeback as the view lists it: with its merchant's name. */
export type ListedDispute = DisputeEntry & { readonly merchantName?: string };

export interface DisputesRead {
  readonly month: string;
  readonly previousMonth: string;
  readonly chargebacks: readonly ListedDispute[];
  /** Each merchant's rate of the month and of the month before (the merchant filter applies). */
  readonly rates: { readonly month: readonly MerchantRate[]; readonly previous: readonly MerchantRate[] };
  readonly rule: RateRule;
  readonly merchantNames: Readonly<Record<string, string>>;
}

export const rateRuleOf = (config: RateDeps['config']): RateRule => ({ thresholdPercent: config.CHARGEBACK_RATE_ALARM_PERCENT, minSettled: config.CHARGEBACK_RATE_MIN_SETTLED });

/** The month asked for (checked), or this one. */
function monthAsked(deps: Pick<DisputeDeps, 'clock'>, month: string | undefined): string {
  const asked = month?.trim();
  if (!asked) return monthOf(deps.clock.now().toISOString());
  if (!isMonth(asked)) throw invalidRequest([{ path: 'month', message: 'The month should be written as YYYY-MM.' }]);
  return asked;
}

/**
 * The rates of a month of the merchants with a chargeback in it (of those `wanted`, when given): the
 * month's chargebacks over their settled payments, counted (settled-months.ts). A merchant without a
 * chargeback has no rate to watch, and its payments are not read.
 */
export async function monthRates(deps: RateDeps, month: string, options: { readonly entries?: readonly DisputeEntry[]; readonly wanted?: (merchantKey: string) => boolean; readonly budget?: CountBudget } = {}): Promise<MerchantRate[]> {
  const disputes = options.entries ?? (await deps.disputes.ofMonth(month));
  const charged = [...new Set(disputes.map((d) => d.merchantKey))].filter((m) => !options.wanted || options.wanted(m));
  const tallies = await settledMonths(deps, month, charged, options.budget);
  return ratesOf(month, tallies, disputes.filter((d) => charged.includes(d.merchantKey)), rateRuleOf(deps.config));
}

/** A month's chargebacks as asked (the export's whole answer), and what the rates beside them need. */
export interface ChargebackList {
  readonly month: string;
  readonly chargebacks: readonly ListedDispute[];
  readonly merchantNames: Readonly<Record<string, string>>;
}

/** The merchants and chargebacks a search reads, and its filter of merchants. */
async function searched(deps: DisputeDeps, search: DisputeSearch) {
  const month = monthAsked(deps, search.month);
  const outcome = search.outcome?.trim();
  if (outcome && outcome !== 'recorded' && outcome !== 'refused') throw invalidRequest([{ path: 'outcome', message: 'The value you selected is not a valid choice.' }]);
  const directory = await deps.merchants.list(RATE_MERCHANTS);
  const names = new Map(directory.map((m) => [m.merchantKey, m.name]));
  const wanted = search.merchant?.trim().toLowerCase();
  const merchantMatches = (key: string): boolean => !wanted || key.toLowerCase() === wanted || (names.get(key) ?? '').toLowerCase().includes(wanted);
  const thisMonth = await deps.disputes.ofMonth(month);
  const reason = search.reason?.trim();
  const chargebacks = thisMonth
    .filter((d) => merchantMatches(d.merchantKey) && (!reason || d.reasonCode === reason) && (!outcome || d.outcome === outcome))
    .sort((a, b) => (b.chargebackDate ?? b.recordedAt).localeCompare(a.chargebackDate ?? a.recordedAt) || b.recordedAt.localeCompare(a.recordedAt))
    .map((d) => ({ ...d, ...(names.has(d.merchantKey) ? { merchantName: names.get(d.merchantKey) } : {}) }));
  return { month, directory, merchantMatches, thisMonth, list: { month, chargebacks, merchantNames: Object.fromEntries(names) } as ChargebackList };
}

/** A month's chargebacks (newest first), filtered by merchant, reason code and outcome: the export reads no rates. */
export async function chargebackList(deps: DisputeDeps, search: DisputeSearch = {}): Promise<ChargebackList> {
  return (await searched(deps, search)).list;
}

/**
 * The disputes view: a month's chargebacks (newest first), filtered by merchant, reason code and
 * outcome, and the chargeback rate of the month and the one before of each merchant with a
 * chargeback in it. With a budget (the request's time), a merchant's settled payments not counted
 * by then show as a part count (MerchantRate.complete); the next reading goes on from there.
 */
export async function disputesOf(deps: DisputeDeps, search: DisputeSearch = {}, budget?: CountBudget): Promise<DisputesRead> {
  const { month, merchantMatches, thisMonth, list } = await searched(deps, search);
  const previous = previousMonth(month);
  const [rates, previousRates] = await Promise.all([
    monthRates(deps, month, { entries: thisMonth, wanted: merchantMatches, ...(budget ? { budget } : {}) }),
    monthRates(deps, previous, { wanted: merchantMatches, ...(budget ? { budget } : {}) }),
  ]);
  return {
    ...list,
    previousMonth: previous,
    rates: { month: rates, previous: previousRates },
    rule: rateRuleOf(deps.config),
  };
}

export interface RateReport {
  readonly month: string;
  /** The merchants with a chargeback this month: the only ones rated. */
  readonly merchants: number;
  /** The highest rate among the merchants whose month counts; 0 when none does. */
  readonly highestPercent: number;
  readonly over: readonly { readonly merchantKey: string; readonly countRatePercent: number; readonly settledCount: number; readonly chargebackCount: number }[];
  /** Merchants whose settled payments this run did not finish counting (its time ran out): rated on a later run, from the days kept. */
  readonly counting: readonly string[];
}

/**
 * This month's chargeback rates of the merchants with a chargeback this month (the hourly job): the
 * highest one that counts is the metric the chargeback-rate alarm watches, and each merchant at or
 * over the threshold is named. Run again, it takes each closed day from the figure an earlier run
 * kept, and counts today's payments afresh.
 */
export async function checkChargebackRates(deps: RateDeps, budget?: CountBudget): Promise<RateReport> {
  const month = monthOf(deps.clock.now().toISOString());
  const rates = await monthRates(deps, month, budget ? { budget } : {});
  const rule = rateRuleOf(deps.config);
  const over = rates.filter((r) => r.over).map((r) => ({ merchantKey: r.merchantKey, countRatePercent: r.countRatePercent ?? 0, settledCount: r.settledCount, chargebackCount: r.chargebackCount }));
  return { month, merchants: rates.length, highestPercent: highestCountedRate(rates, rule), over, counting: rates.filter((r) => !r.complete).map((r) => r.merchantKey) };
}
