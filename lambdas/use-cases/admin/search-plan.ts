import { ApiError, invalidRequest, type FieldError } from '../../domain/errors';
import { currencyExponent } from '../../domain/money';
import { PAYMENT_STATUSES, type Payment, type PaymentStatus } from '../../domain/payment';
import { paymentReading, storedStatusesReadingAs } from '../../domain/payment-view';
import { ADMIN_LIMITS, type AdminReadDeps } from './deps';
import type { Position } from './search-cursor';

/** A search for payments, as an operator writes it; every criterion optional. */
export interface PaymentSearch {
  /** A whole payment id (read directly), or its first characters (at least 4). */
  readonly paymentId?: string;
  /** An order number; when no order has exactly this number, any order containing it (case-insensitive). */
  readonly order?: string;
  readonly status?: string;
  /** A merchant key, or part of a merchant's name (case-insensitive). */
  readonly merchant?: string;
  /** The customer's e-mail, or part of it (case-insensitive). */
  readonly email?: string;
  /** The card's last four digits. */
  readonly last4?: string;
  /** The order amount as operators write it ("25", "25.00", "25,5"). */
  readonly amount?: string;
  /** YYYY-MM-DD, UTC, inclusive. */
  readonly from?: string;
  readonly to?: string;
  readonly cursor?: string;
}

/** A payment found for an operator, with its merchant's name when the directory has it. */
export interface FoundPayment {
  readonly payment: Payment;
  readonly merchantName?: string;
}

export const foundIn = (names: ReadonlyMap<string, string>) => (payment: Payment): FoundPayment =>
  names.has(payment.merchantKey) ? { payment, merchantName: names.get(payment.merchantKey) } : { payment };

/** How long a count or export part may go on starting index reads: real time (Date.now), as a deadline is. */
export interface SearchBudget {
  /** Epoch milliseconds after which no index read is started; the part read so far is answered. */
  readonly stopAt: number;
}

/** Whether the budget still allows starting an index read (always, without a budget: tests and scripts). */
export const inBudget = (budget: SearchBudget | undefined): boolean => !budget || Date.now() < budget.stopAt;

/** The budget ended before a single index read: no part, no cursor to answer with. */
export const tooBroad = (): ApiError => new ApiError('SEARCH_TOO_BROAD');

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 24 * 3600_000;
const FULL_PAYMENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a search reads, decided once: the merchants, the days, the checks on each payment. */
export interface SearchPlan {
  /** When the search was read: a payment's status is its reading at this time. */
  readonly now: Date;
  readonly found: (p: Payment) => FoundPayment;
  /** The whole answer when the search names its payments (a whole id, an exact order number). */
  readonly fixed?: Payment[];
  readonly merchants: readonly string[];
  readonly to: string;
  readonly days: number;
  /**
   * The stored statuses a status search keeps: those that may read as the status asked. The index
   * holds keys only, so they are read on the payments its entries name (the store's paymentsOfDay).
   */
  readonly statuses?: readonly string[];
  /** Checks the index cannot make. */
  readonly keep: (p: Payment) => boolean;
  /** True when the index alone answers every criterion (merchant, days): a count counts its entries, no payment read. */
  readonly indexOnly: boolean;
}

/**
 * Plans a search, every way through an index built for it, never by reading a day and filtering:
 * - by a whole payment id: the payment itself;
 * - by order number: the order index of the merchant (or of each merchant, when none is named),
 *   every payment of that number, newest first;
 * - else by day (newest first), merchant by merchant (the named one, those whose name contains the
 *   text, or each by name), through the sharded search index. Its entries are keys only: a status
 *   search reads the stored status of the payments they name (ADR 0043). The other criteria (part
 *   of an order number, the start of a payment id, e-mail, last four, amount) are checked on the
 *   payments each index page names.
 */
export async function planSearch(deps: AdminReadDeps, q: PaymentSearch): Promise<SearchPlan> {
  const now = deps.clock.now();
  if (q.status && !(PAYMENT_STATUSES as readonly string[]).includes(q.status)) throw invalidRequest([{ path: 'status', message: 'The value you selected is not a valid choice.' }]);
  const problems: FieldError[] = [];
  const last4 = q.last4?.trim();
  if (last4 && !/^\d{4}$/.test(last4)) problems.push({ path: 'last4', message: 'Enter the last four digits of the card.' });
  const idPart = q.paymentId?.trim().toLowerCase();
  // The start of an id (hex and dashes, 4 or more) is searched for; anything else is read as a whole id.
  const idPrefix = idPart && !FULL_PAYMENT_ID.test(idPart) && /^[0-9a-f-]+$/.test(idPart) ? idPart : undefined;
  if (idPrefix && idPrefix.length < 4) problems.push({ path: 'payment_id', message: 'Enter a payment id or at least its first 4 characters.' });
  const amount = (q.amount?.trim() ? /^(\d{1,15})(?:[.,](\d{1,3}))?$/.exec(q.amount.trim()) : undefined) ?? undefined;
  if (q.amount?.trim() && !amount) problems.push({ path: 'amount', message: 'Enter an amount such as 25 or 25.00.' });
  if (problems.length) throw invalidRequest(problems);
  const to = q.to && DAY.test(q.to) ? q.to : now.toISOString().slice(0, 10);
  const from = q.from && DAY.test(q.from) ? q.from : new Date(Date.parse(to) - 6 * DAY_MS).toISOString().slice(0, 10);
  const days = Math.floor((Date.parse(to) - Date.parse(from)) / DAY_MS) + 1;
  const directory = await deps.merchants.list(ADMIN_LIMITS.merchantsPerSearch);
  const names = new Map(directory.map((m) => [m.merchantKey, m.name]));
  const merchantText = q.merchant?.trim();
  const merchants = !merchantText
    ? directory.map((m) => m.merchantKey)
    : names.has(merchantText)
      ? [merchantText]
      : directory.filter((m) => m.name.toLowerCase().includes(merchantText.toLowerCase())).map((m) => m.merchantKey);
  const partialOrder = q.order?.trim().toLowerCase();
  // A status is checked on the payment's reading (what the merchant's status route says), after the
  // store kept the payments of the stored statuses that may read as it.
  const status = q.status as PaymentStatus | undefined;
  const checks = { idPart: idPrefix, last4, amount, email: q.email };
  const keep = (p: Payment) => (!partialOrder || p.order.number.toLowerCase().includes(partialOrder)) && wanted(p, checks) && (!status || paymentReading(p, now).status === status);
  // A status is not in the index (keys only): counting by status reads the payments.
  const indexOnly = !partialOrder && !idPrefix && !last4 && !amount && !q.email?.trim() && !status;
  const base = { now, found: foundIn(names), merchants, to, days, keep, indexOnly, ...(status ? { statuses: storedStatusesReadingAs(status) } : {}) };
  if (idPart && !idPrefix) {
    const p = await deps.store.findPayment(q.paymentId!.trim());
    return { ...base, fixed: p && matches(p, q, now) && (!merchantText || merchants.includes(p.merchantKey)) ? [p] : [] };
  }
  if (merchantText && !merchants.length) return { ...base, fixed: [] };
  if (!(days >= 1 && days <= ADMIN_LIMITS.maxDays)) {
    throw invalidRequest([{ path: 'from', message: `The date range should cover 1 to ${ADMIN_LIMITS.maxDays} days.` }]);
  }
  const inRange = (p: Payment) => p.createdAt.slice(0, 10) >= from && p.createdAt.slice(0, 10) <= to;
  if (q.order?.trim()) {
    // An order number names a few payments: all of them, from the order index, at once.
    const perMerchant = await Promise.all(merchants.map((m) => deps.store.paymentsByOrder(m, q.order!.trim(), ADMIN_LIMITS.pageSize)));
    const exact = perMerchant
      .flat()
      .filter((p) => inRange(p) && matches(p, q, now) && wanted(p, checks))
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
      .slice(0, ADMIN_LIMITS.pageSize);
    if (exact.length) return { ...base, fixed: exact };
  }
  return base;
}

export const dayOf = (plan: SearchPlan, p: Position): string => new Date(Date.parse(plan.to) - p.day * DAY_MS).toISOString().slice(0, 10);
export const nextOf = (plan: SearchPlan, p: Position): Position =>
  p.merchant + 1 < plan.merchants.length ? { day: p.day, merchant: p.merchant + 1 } : { day: p.day + 1, merchant: 0 };

/**
 * Reads on from a position, day by day (newest first) and merchant by merchant, through the sharded
 * search index, keeping the payments that pass the plan's checks, until `want` are found, `maxReads`
 * index pages are read, the budget ends (none started after it) or the days end. Never reads more
 * than still fits: the position it returns resumes right after the last payment read.
 */
export async function readOn(
  deps: AdminReadDeps,
  plan: SearchPlan,
  start: Position,
  limits: { readonly want: number; readonly maxReads: number; readonly pageLimit: number },
  budget?: SearchBudget,
): Promise<{ found: Payment[]; position: Position; more: boolean }> {
  const { want, maxReads, pageLimit } = limits;
  let position = start;
  const found: Payment[] = [];
  for (let reads = 0; reads < maxReads && position.day < plan.days && found.length < want; reads++) {
    // With a budget (a count or export part), no index read is started after it ends.
    if (!inBudget(budget)) {
      if (reads === 0) throw tooBroad();
      break;
    }
    const merchantKey = plan.merchants[position.merchant];
    if (merchantKey === undefined) {
      position = { day: position.day + 1, merchant: 0 };
      continue;
    }
    const page = await deps.store.paymentsOfDay({ merchantKey, day: dayOf(plan, position), statuses: plan.statuses, limit: Math.min(pageLimit, want - found.length), cursor: position.page });
    found.push(...page.payments.filter(plan.keep));
    position = page.cursor ? { ...position, page: page.cursor } : nextOf(plan, position);
  }
  return { found, position, more: position.day < plan.days };
}

/** The criteria checked on the payments an index page names. */
function wanted(p: Payment, c: { idPart?: string; last4?: string; amount?: RegExpExecArray; email?: string }): boolean {
  if (c.idPart && !p.paymentId.toLowerCase().startsWith(c.idPart)) return false;
  // A wallet payment has no card: the last four digits the wallet showed (docs/wallets.md).
  if (c.last4 && (p.card ? p.card.mask.slice(-4) : p.wallet?.last4) !== c.last4) return false;
  const email = c.email?.trim().toLowerCase();
  if (email && !(p.customer?.email ?? '').toLowerCase().includes(email)) return false;
  if (c.amount) {
    const exponent = currencyExponent(p.order.currency) ?? 2;
    const [, whole = '0', fraction = ''] = c.amount;
    if (fraction.length > exponent) return false;
    if (Number(whole) * 10 ** exponent + Number(fraction.padEnd(exponent, '0') || '0') !== p.order.amountMinor) return false;
  }
  return true;
}

/** A payment read directly or by its order number still meets the search's own criteria (its status as read at `now`). */
function matches(p: Payment, q: PaymentSearch, now: Date): boolean {
  return (!q.order || p.order.number === q.order.trim()) && (!q.status || paymentReading(p, now).status === q.status);
}
