import type { MerchantRate } from '../../domain/dispute-rates';
import { formatMinor } from '../../domain/money';
import type { ChargebackList, DisputesRead, ListedDispute } from '../../use-cases/admin/disputes';
import { csvLine } from './payments-csv';

/** A chargeback as the admin API shows it (snake_case, amounts as the merchant API writes them). */
export interface DisputeView {
  readonly trans_id: string;
  readonly payment_id: string;
  readonly merchant_key: string;
  readonly merchant_name?: string;
  readonly amount: string;
  readonly currency: string;
  readonly reason_code?: string;
  readonly chargeback_date?: string;
  readonly bank_date?: string;
  readonly recorded_at: string;
  readonly outcome: 'recorded' | 'refused';
  readonly refusal?: string;
}

export interface RateView {
  readonly merchant_key: string;
  readonly merchant_name?: string;
  readonly month: string;
  /** The merchant's payments created in the month whose money settled. */
  readonly settled_count: number;
  /** False when the reading ran out of time before it counted every day: the settled figures are a part (the rate reads high); read again. */
  readonly settled_complete: boolean;
  readonly chargeback_count: number;
  readonly count_rate_percent?: number;
  readonly amounts: readonly { readonly currency: string; readonly settled_amount: string; readonly chargeback_amount: string; readonly rate_percent?: number }[];
  readonly over_threshold: boolean;
}

export interface DisputesView {
  readonly month: string;
  readonly previous_month: string;
  readonly threshold_percent: number;
  readonly min_settled: number;
  readonly chargebacks: readonly DisputeView[];
  readonly rates: { readonly month: readonly RateView[]; readonly previous: readonly RateView[] };
}

const disputeView = (d: ListedDispute): DisputeView => ({
  trans_id: d.transId,
  payment_id: d.paymentId,
  merchant_key: d.merchantKey,
  ...(d.merchantName ? { merchant_name: d.merchantName } : {}),
  amount: formatMinor(d.amountMinor, d.currency),
  currency: d.currency,
  ...(d.reasonCode ? { reason_code: d.reasonCode } : {}),
  ...(d.chargebackDate ? { chargeback_date: d.chargebackDate } : {}),
  ...(d.bankDate ? { bank_date: d.bankDate } : {}),
  recorded_at: d.recordedAt,
  outcome: d.outcome,
  ...(d.refusal ? { refusal: d.refusal } : {}),
});

const rateView = (names: Readonly<Record<string, string>>) => (r: MerchantRate): RateView => ({
  merchant_key: r.merchantKey,
  ...(names[r.merchantKey] ? { merchant_name: names[r.merchantKey] } : {}),
  month: r.month,
  settled_count: r.settledCount,
  settled_complete: r.complete,
  chargeback_count: r.chargebackCount,
  ...(r.countRatePercent !== undefined ? { count_rate_percent: r.countRatePercent } : {}),
  amounts: r.amounts.map((a) => ({
    currency: a.currency,
    settled_amount: formatMinor(a.settledMinor, a.currency),
    chargeback_amount: formatMinor(a.chargedBackMinor, a.currency),
    ...(a.ratePercent !== undefined ? { rate_percent: a.ratePercent } : {}),
  })),
  over_threshold: r.over,
});

export function disputesView(read: DisputesRead): DisputesView {
  const rate = rateView(read.merchantNames);
  return {
    month: read.month,
    previous_month: read.previousMonth,
    threshold_percent: read.rule.thresholdPercent,
    min_settled: read.rule.minSettled,
    chargebacks: read.chargebacks.map(disputeView),
    rates: { month: read.rates.month.map(rate), previous: read.rates.previous.map(rate) },
  };
}

/** The columns of the disputes export, in order. */
export const DISPUTE_COLUMNS = [
  'chargeback_date', 'bank_date', 'recorded_at', 'trans_id', 'payment_id', 'merchant_key', 'merchant_name', 'amount', 'currency', 'reason_code', 'outcome', 'refusal',
] as const;

/** A month's chargebacks as one CSV file (RFC 4180, with a byte-order mark and the header row), as filtered. */
export function disputesCsv(read: Pick<ChargebackList, 'chargebacks'>): string {
  const rows = read.chargebacks.map(disputeView).map((d) => [
    d.chargeback_date ?? '', d.bank_date ?? '', d.recorded_at, d.trans_id, d.payment_id, d.merchant_key, d.merchant_name ?? '', d.amount, d.currency, d.reason_code ?? '', d.outcome, d.refusal ?? '',
  ]);
  return `\uFEFF${csvLine([...DISPUTE_COLUMNS])}${rows.map(csvLine).join('')}`;
}
