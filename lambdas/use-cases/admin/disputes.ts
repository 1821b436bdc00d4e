import { invalidRequest } from '../../domain/errors';
import { highestCountedRate, isMonth, monthOf, previousMonth, ratesOf, type DisputeEntry, type MerchantRate, type RateRule } from '../../domain/dispute-rates';
import type { Config } from '../../config';
import type { DisputeLog, SettlementTally } from '../../ports/disputes';
import type { Clock } from '../../ports/clock';
import type { MerchantDirectory } from '../../ports/merchants';

/** What the disputes view and the chargeback-rate job read. */
export interface DisputeDeps {
  readonly disputes: DisputeLog;
  readonly settlements: SettlementTally;
  readonly merchants: MerchantDirectory;
  readonly clock: Clock;
  readonly config: Pick<Config, 'CHARGEBACK_RATE_ALARM_PERCENT' | 'CHARGEBACK_RATE_MIN_SETTLED'>;
}

/** The merchants whose tallies a rate reading looks up (the directory, by name). */
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

export const rateRuleOf = (config: DisputeDeps['config']): RateRule => ({ thresholdPercent: config.CHARGEBACK_RATE_ALARM_PERCENT, minSettled: config.CHARGEBACK_RATE_MIN_SETTLED });

/** The month asked for (checked), or this one. */
function monthAsked(deps: Pick<DisputeDeps, 'clock'>, month: string | undefined): string {
  const asked = month?.trim();
  if (!asked) return monthOf(deps.clock.now().toISOString());
  if (!isMonth(asked)) throw invalidRequest([{ path: 'month', message: 'The month should be written as YYYY-MM.' }]);
  return asked;
}

/** Every merchant's rate of a month: the month's chargebacks over the merchants' tallies of it. */
export async function monthRates(deps: DisputeDeps, month: string, merchantKeys: readonly string[], entries?: readonly DisputeEntry[]): Promise<MerchantRate[]> {
  const [disputes, tallies] = await Promise.all([entries ?? deps.disputes.ofMonth(month), deps.settlements.ofMonth(month, merchantKeys)]);
  return ratesOf(month, tallies, disputes, rateRuleOf(deps.config));
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
 * outcome, and each merchant's chargeback rate of the month and the one before.
 */
export async function disputesOf(deps: DisputeDeps, search: DisputeSearch = {}): Promise<DisputesRead> {
  const { month, directory, merchantMatches, thisMonth, list } = await searched(deps, search);
  const previous = previousMonth(month);
  const keys = directory.map((m) => m.merchantKey).filter(merchantMatches);
  const [rates, previousRates] = await Promise.all([monthRates(deps, month, keys, thisMonth), monthRates(deps, previous, keys)]);
  const inView = (r: MerchantRate) => merchantMatches(r.merchantKey);
  return {
    ...list,
    previousMonth: previous,
    rates: { month: rates.filter(inView), previous: previousRates.filter(inView) },
    rule: rateRuleOf(deps.config),
  };
}

export interface RateReport {
  readonly month: string;
  readonly merchants: number;
  /** The highest rate among the merchants whose month counts; 0 when none does. */
  readonly highestPercent: number;
  readonly over: readonly { readonly merchantKey: string; readonly countRatePercent: number; readonly settledCount: number; readonly chargebackCount: number }[];
}

/**
 * This month's chargeback rates of every merchant (the hourly job): the highest one that counts is
 * the metric the chargeback-rate alarm watches, and each merchant at or over the threshold is named.
 */
export async function checkChargebackRates(deps: DisputeDeps): Promise<RateReport> {
  const month = monthOf(deps.clock.now().toISOString());
  const directory = await deps.merchants.list(RATE_MERCHANTS);
  const rates = await monthRates(deps, month, directory.map((m) => m.merchantKey));
  const rule = rateRuleOf(deps.config);
  const over = rates.filter((r) => r.over).map((r) => ({ merchantKey: r.merchantKey, countRatePercent: r.countRatePercent ?? 0, settledCount: r.settledCount, chargebackCount: r.chargebackCount }));
  return { month, merchants: rates.length, highestPercent: highestCountedRate(rates, rule), over };
}
