import { openCursor, sealCursor } from '../adapters/dynamodb/cursor';
import { AVAILABLE_METHODS } from '../domain/checkout-methods';
import { ApiError, ERRORS, RetryLaterError, invalidRequest, type FieldError } from '../domain/errors';
import { currencyExponent, formatMinor, parseAmount } from '../domain/money';
import { PAYMENT_STATUSES, type Payment, type PaymentStatus } from '../domain/payment';
import { alwaysReadsAsStored, paymentReading, storedStatusesReadingAs } from '../domain/payment-view';
import { refusalOf } from '../domain/state-machine';
import { voidBlockedReason } from '../domain/void-window';
import type { Acquirer } from '../ports/acquirer';
import type { Clock } from '../ports/clock';
import type { Ids } from '../ports/ids';
import type { Merchant, MerchantDirectory, MerchantSecrets, MerchantSettings } from '../ports/merchants';
import type { AuditEntry, AuditLog, SearchLeases } from '../ports/operators';
import type { PaymentStore } from '../ports/payments';
import { CAPTURE_IN_PROGRESS_REASON, capture, release, type CaptureResult } from './capture-payment';
import { QUEUES } from './record-outcome';
import { refundPayment, refundableMinor } from './refund-payment';
import { voidPayment } from './void-payment';
import {
  MerchantAdminError,
  createMerchant,
  rotatePassword,
  rotateWebhookSecret,
  settingsProblems,
  updateMerchantSettings,
  type ManageMerchantsDeps,
  type MerchantCredentials,
} from './manage-merchants';
import type { DestinationPolicy } from '../domain/notification-url';
import { firstBreak, type ChainBreak } from '../domain/audit-chain';
import { inParallel } from '../domain/parallel';

export interface AdminDeps {
  readonly store: PaymentStore;
  readonly merchants: MerchantDirectory;
  readonly secrets: MerchantSecrets;
  readonly acquirer: Acquirer;
  readonly audit: AuditLog;
  readonly clock: Clock;
  readonly ids: Ids;
}

/** Limits of the portal's reads: pages, days searched, queries per search. */
/**
 * maxQueriesPerSearch bounds the day-and-merchant pages one search request reads (each a query of
 * every shard of the search index); merchantsPerSearch the merchants a search without one visits.
 */
export const ADMIN_LIMITS = { pageSize: 25, maxDays: 31, maxQueriesPerSearch: 20, merchantsPerSearch: 200, queueSize: 500, bulkSize: 50 } as const;

export type PaymentAction = 'capture' | 'release' | 'void' | 'refund';

/** What an operator may do with a payment now (the portal shows these buttons only). */
export function allowedActions(p: Payment, now: Date): PaymentAction[] {
  const actions: PaymentAction[] = [];
  if (!refusalOf('capture', p) && !p.operation) actions.push('capture', 'release');
  if (!refusalOf('void', p) && !voidBlockedReason(p, now) && !p.operation) actions.push('void');
  if (!refusalOf('refund', p) && !p.operation && (p.refundHeldMinor ?? p.refundedMinor ?? 0) < refundableMinor(p)) actions.push('refund');
  return actions;
}

/** A payment as the portal lists it; its status and reason as the merchant's status route reads them. */
export function paymentSummary(p: Payment, now: Date) {
  const reading = paymentReading(p, now);
  return {
    payment_id: p.paymentId,
    merchant_key: p.merchantKey,
    order_number: p.order.number,
    amount: p.order.amount,
    currency: p.order.currency,
    description: p.order.description,
    status: reading.status,
    reason: reading.reason,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
    card: p.card ? { mask: p.card.mask, brand: p.card.brand, expiry: `${String(p.card.expMonth).padStart(2, '0')}/${p.card.expYear}` } : undefined,
    customer: p.customer,
    authorization_expires_at: p.authorizationExpiresAt,
    captured_amount: p.capturedMinor !== undefined ? formatMinor(p.capturedMinor, p.order.currency) : undefined,
    refunded_amount: p.refundedMinor ? formatMinor(p.refundedMinor, p.order.currency) : undefined,
    left_to_refund: p.status === 'settled' ? formatMinor(leftToRefundMinor(p), p.order.currency) : undefined,
    voidable_until: p.voidableUntil,
    capturing: p.operation?.kind === 'capture' ? { by: p.operation.actor, since: p.operation.startedAt } : undefined,
    actions: allowedActions(p, now),
  };
}

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

/** A search as the admin API's query string spells it (snake_case). */
export function paymentSearchOf(q: Readonly<Record<string, string | undefined>> | undefined): PaymentSearch {
  const { payment_id: paymentId, order, status, merchant, email, last4, amount, from, to, cursor } = q ?? {};
  return { paymentId, order, status, merchant, email, last4, amount, from, to, cursor };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 24 * 3600_000;
const FULL_PAYMENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A summary with the merchant's name beside its key (the portal shows names). */
export type PaymentListEntry = ReturnType<typeof paymentSummary> & { readonly merchant_name?: string };

/**
 * Searches payments, every way through an index built for it, never by reading a day and filtering:
 * - by a whole payment id: the payment itself;
 * - by order number: the order index of the merchant (or of each merchant, when none is named),
 *   every payment of that number, newest first;
 * - else by day (newest first), merchant by merchant (the named one, those whose name contains the
 *   text, or each by name), through the sharded search index, whose entries carry the status a
 *   status search filters on. The other criteria (part of an order number, the start of a payment
 *   id, e-mail, last four, amount) are checked on the payments each index page names; a page is
 *   filled from as many index pages as the read budget allows, so a rare match may need "Next page".
 * Paged with an opaque cursor; every page does a bounded number of index reads.
 */
export async function searchPayments(deps: AdminDeps, q: PaymentSearch): Promise<{ payments: PaymentListEntry[]; cursor?: string }> {
  const plan = await planSearch(deps, q);
  if (plan.fixed) return { payments: plan.fixed.map(plan.listed) };
  const read = await readOn(deps, plan, q.cursor ? searchPosition(q.cursor) : START, ADMIN_LIMITS.pageSize, ADMIN_LIMITS.maxQueriesPerSearch, ADMIN_LIMITS.pageSize);
  return { payments: read.found.map(plan.listed), ...(read.more ? { cursor: cursorOf(read.position) } : {}) };
}

/** Limits of one count or export request; the portal asks again with the cursor until it is done. */
export const BULK_LIMITS = {
  /** Merchant days counted per request, from the index alone (a status filter included). */
  countDaysPerRequest: 64,
  /** Merchant days counted at once. */
  countConcurrency: 4,
  /** Index pages read per request when a criterion needs the payments themselves. */
  readsPerRequest: 40,
  /** Payments an index page names when counting or exporting. */
  pageSize: 100,
  /** Rows of one export part (well under Lambda's 6 MB answer). */
  exportRows: 1000,
  /**
   * What a request leaves of its function's time when it stops starting index reads: the reads
   * under way (a DynamoDB query with its retries) and the answer must still fit before the timeout.
   */
  querySlackMs: 3000,
} as const;

/** How long a count or export part may go on starting index reads: real time (Date.now), as a deadline is. */
export interface SearchBudget {
  /** Epoch milliseconds after which no index read is started; the part read so far is answered. */
  readonly stopAt: number;
}

export interface SearchBoundsDeps {
  readonly searchLeases: SearchLeases;
  readonly config: { readonly ADMIN_SEARCH_BUDGET_MS: number };
}

/**
 * Runs one count or export part for an operator, bounded two ways: it takes one of the operator's
 * slots first (at most OPERATOR_SEARCHES_AT_ONCE run at once, across instances; beyond that 429
 * with Retry-After and nothing read), held until it answers or at the latest until `deadline`
 * (the function's end); and it stops starting index reads when its budget ends (ADMIN_SEARCH_BUDGET_MS,
 * never later than the deadline less BULK_LIMITS.querySlackMs), answering the part read so far with
 * its cursor. A flood of one operator's counts thus neither times out nor takes the table's reads
 * from the merchants.
 */
export async function boundedSearchWork<T>(deps: SearchBoundsDeps, operator: string, deadline: Date, work: (budget: SearchBudget) => Promise<T>): Promise<T> {
  const now = Date.now();
  const slot = await deps.searchLeases.take(operator, deadline, new Date(now));
  if (!slot.taken) throw new RetryLaterError('OPERATOR_SEARCHES_BUSY', slot.retryAfterSeconds);
  try {
    return await work({ stopAt: Math.min(now + deps.config.ADMIN_SEARCH_BUDGET_MS, deadline.getTime() - BULK_LIMITS.querySlackMs) });
  } finally {
    await slot.release();
  }
}

/** Whether the budget still allows starting an index read (always, without a budget: tests and scripts). */
const inBudget = (budget: SearchBudget | undefined): boolean => !budget || Date.now() < budget.stopAt;

/** The budget ended before a single index read: no part, no cursor to answer with. */
const tooBroad = (): ApiError => new ApiError('SEARCH_TOO_BROAD');

/**
 * How many payments match a search. Criteria the search index answers (merchant, days, status)
 * are counted there without reading a payment; the others read the payments page by page. One
 * request does a bounded amount of work: `complete` is false and `cursor` resumes the count.
 */
export async function countPayments(deps: AdminDeps, q: PaymentSearch, budget?: SearchBudget): Promise<{ total: number; complete: boolean; cursor?: string }> {
  const plan = await planSearch(deps, q);
  if (plan.fixed) return { total: plan.fixed.length, complete: true };
  const resume = q.cursor ? countPosition(q.cursor) : { ...START, counted: 0 };
  let total = resume.counted;
  let position: Position = { day: resume.day, merchant: resume.merchant, ...(resume.page !== undefined ? { page: resume.page } : {}) };
  if (plan.indexOnly) {
    // Merchant days in order, a few at once; a day is counted whole, so the position is a day and merchant.
    const batch: Position[] = [];
    for (let p = position; p.day < plan.days && batch.length < BULK_LIMITS.countDaysPerRequest; p = nextOf(plan, p)) batch.push(p);
    // A few at once, and a round is started only while the budget lasts: the position after the last round counted.
    for (let from = 0; from < batch.length; from += BULK_LIMITS.countConcurrency) {
      if (!inBudget(budget)) {
        if (from === 0) throw tooBroad();
        break;
      }
      const round = batch.slice(from, from + BULK_LIMITS.countConcurrency);
      const counts = await inParallel(round, BULK_LIMITS.countConcurrency, (p) =>
        plan.merchants[p.merchant] === undefined ? Promise.resolve(0) : deps.store.countPaymentsOfDay({ merchantKey: plan.merchants[p.merchant]!, day: dayOf(plan, p), statuses: plan.statuses }),
      );
      total += counts.reduce((a, b) => a + b, 0);
      position = nextOf(plan, round[round.length - 1]!);
    }
  } else {
    const read = await readOn(deps, plan, position, Number.POSITIVE_INFINITY, BULK_LIMITS.readsPerRequest, BULK_LIMITS.pageSize, budget);
    total += read.found.length;
    position = read.position;
  }
  const complete = position.day >= plan.days;
  return { total, complete, ...(complete ? {} : { cursor: cursorOf({ ...position, counted: total }) }) };
}

/** The columns of an export, in order. */
export const EXPORT_COLUMNS = [
  'created_at', 'payment_id', 'merchant_key', 'merchant_name', 'order_number', 'amount', 'currency', 'status', 'reason',
  'captured_amount', 'refunded_amount', 'card_brand', 'card_mask', 'customer_email', 'updated_at',
] as const;

/**
 * One part of a search's CSV export: the rows of up to `exportRows` matching payments, newest first,
 * read page by page through the index (a part never holds more), and the cursor of the next part.
 * The first part starts with a byte-order mark and the header row; the parts concatenated are one
 * RFC 4180 file. Card numbers appear only masked, as stored.
 */
export async function exportPayments(deps: AdminDeps, q: PaymentSearch, budget?: SearchBudget): Promise<{ csv: string; rows: number; cursor?: string }> {
  const plan = await planSearch(deps, q);
  const first = !q.cursor;
  const head = first ? `\uFEFF${csvLine([...EXPORT_COLUMNS])}` : '';
  if (plan.fixed) return { csv: head + plan.fixed.map((p) => csvLine(exportRow(plan.listed(p)))).join(''), rows: plan.fixed.length };
  const read = await readOn(deps, plan, q.cursor ? searchPosition(q.cursor) : START, BULK_LIMITS.exportRows, BULK_LIMITS.readsPerRequest, BULK_LIMITS.pageSize, budget);
  return {
    csv: head + read.found.map((p) => csvLine(exportRow(plan.listed(p)))).join(''),
    rows: read.found.length,
    ...(read.more ? { cursor: cursorOf(read.position) } : {}),
  };
}

function exportRow(e: PaymentListEntry): string[] {
  return [
    e.created_at, e.payment_id, e.merchant_key, e.merchant_name ?? '', e.order_number, e.amount, e.currency, e.status, e.reason ?? '',
    e.captured_amount ?? '', e.refunded_amount ?? '', e.card?.brand ?? '', e.card?.mask ?? '', e.customer?.email ?? '', e.updated_at,
  ];
}

/**
 * One CSV line (RFC 4180, CRLF). A cell a spreadsheet would run as a formula (starting with =, +,
 * -, @, a tab or a carriage return: order numbers and e-mails come from outside) is prefixed with
 * an apostrophe, so it is shown as text.
 */
export function csvLine(cells: readonly string[]): string {
  return `${cells
    .map((raw) => {
      const cell = /^[=+\-@\t\r]/.test(raw) ? `'${raw}` : raw;
      return /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
    })
    .join(',')}\r\n`;
}

interface Position {
  readonly day: number;
  readonly merchant: number;
  readonly page?: string;
}
const START: Position = { day: 0, merchant: 0 };

/** What a search reads, decided once: the merchants, the days, the checks on each payment. */
interface SearchPlan {
  readonly listed: (p: Payment) => PaymentListEntry;
  /** The whole answer when the search names its payments (a whole id, an exact order number). */
  readonly fixed?: Payment[];
  readonly merchants: readonly string[];
  readonly to: string;
  readonly days: number;
  /** The stored statuses the index is filtered on: those that may read as the status asked. */
  readonly statuses?: readonly string[];
  /** Checks the index cannot make. */
  readonly keep: (p: Payment) => boolean;
  /** True when the index alone answers every criterion (merchant, days, a status no payment reads otherwise). */
  readonly indexOnly: boolean;
}

async function planSearch(deps: AdminDeps, q: PaymentSearch): Promise<SearchPlan> {
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
  const listed = (p: Payment): PaymentListEntry => ({ ...paymentSummary(p, now), ...(names.has(p.merchantKey) ? { merchant_name: names.get(p.merchantKey) } : {}) });
  const merchantText = q.merchant?.trim();
  const merchants = !merchantText
    ? directory.map((m) => m.merchantKey)
    : names.has(merchantText)
      ? [merchantText]
      : directory.filter((m) => m.name.toLowerCase().includes(merchantText.toLowerCase())).map((m) => m.merchantKey);
  const partialOrder = q.order?.trim().toLowerCase();
  // A status is checked on the payment's reading (what the merchant's status route says), after the
  // index has been filtered on the stored statuses that may read as it.
  const status = q.status as PaymentStatus | undefined;
  const keep = (p: Payment) => (!partialOrder || p.order.number.toLowerCase().includes(partialOrder)) && wanted(p, { idPart: idPrefix, last4, amount, email: q.email }) && (!status || paymentReading(p, now).status === status);
  const indexOnly = !partialOrder && !idPrefix && !last4 && !amount && !q.email?.trim() && (!status || alwaysReadsAsStored(status));
  const base = { listed, merchants, to, days, keep, indexOnly, ...(status ? { statuses: storedStatusesReadingAs(status) } : {}) };
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
      .filter((p) => inRange(p) && matches(p, q, now) && wanted(p, { idPart: idPrefix, last4, amount, email: q.email }))
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
      .slice(0, ADMIN_LIMITS.pageSize);
    if (exact.length) return { ...base, fixed: exact };
  }
  return base;
}

const dayOf = (plan: SearchPlan, p: Position): string => new Date(Date.parse(plan.to) - p.day * DAY_MS).toISOString().slice(0, 10);
const nextOf = (plan: SearchPlan, p: Position): Position =>
  p.merchant + 1 < plan.merchants.length ? { day: p.day, merchant: p.merchant + 1 } : { day: p.day + 1, merchant: 0 };

/**
 * Reads on from a position, day by day (newest first) and merchant by merchant, through the sharded
 * search index, keeping the payments that pass the plan's checks, until `want` are found, `maxReads`
 * index pages are read, the budget ends (none started after it) or the days end. Never reads more than still fits: the position it returns
 * resumes right after the last payment read.
 */
async function readOn(deps: AdminDeps, plan: SearchPlan, start: Position, want: number, maxReads: number, pageLimit: number, budget?: SearchBudget): Promise<{ found: Payment[]; position: Position; more: boolean }> {
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

/** Sealed (HMAC): a count's running total and a search's position come back as we wrote them, or are refused. */
const cursorOf = (position: Position & { counted?: number }): string => sealCursor(position);

/** A count's cursor: a search position and what was counted before it. */
function countPosition(cursor: string): Position & { counted: number } {
  const fields = cursorFields(cursor);
  const position = positionFrom(fields);
  const { counted } = fields;
  if (!Number.isSafeInteger(counted) || (counted as number) < 0) throw BAD_CURSOR();
  return { ...position, counted: counted as number };
}

/** The criteria checked on the payments an index page names. */
function wanted(p: Payment, c: { idPart?: string; last4?: string; amount?: RegExpExecArray; email?: string }): boolean {
  if (c.idPart && !p.paymentId.toLowerCase().startsWith(c.idPart)) return false;
  if (c.last4 && p.card?.mask.slice(-4) !== c.last4) return false;
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

const BAD_CURSOR = () => invalidRequest([{ path: 'cursor', message: 'This value is not valid.' }]);

/** Where a search resumes. Cursors are opaque; one that was not made by us is refused, never a 500. */
function searchPosition(cursor: string): { day: number; merchant: number; page?: string } {
  return positionFrom(cursorFields(cursor));
}

function positionFrom({ day, merchant, page }: Record<string, unknown>): { day: number; merchant: number; page?: string } {
  const index = (n: unknown) => Number.isInteger(n) && (n as number) >= 0;
  if (!index(day) || !index(merchant) || (page !== undefined && typeof page !== 'string')) throw BAD_CURSOR();
  return { day: day as number, merchant: merchant as number, ...(page !== undefined ? { page: page as string } : {}) };
}

/** What a cursor we made holds; anything we did not seal (or that was changed) is refused. */
function cursorFields(cursor: string): Record<string, unknown> {
  try {
    return openCursor(cursor) as Record<string, unknown>;
  } catch {
    throw BAD_CURSOR();
  }
}

/** A read resuming from a tampered cursor fails in the store (bad JSON, a bad date, a key of another shape): refused. */
async function refusingBadCursor<T>(cursor: string | undefined, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (cursor !== undefined && (e instanceof SyntaxError || e instanceof RangeError || (e as Error).name === 'ValidationException')) throw BAD_CURSOR();
    throw e;
  }
}

/** A payment read directly or by its order number still meets the search's own criteria (its status as read at `now`). */
function matches(p: Payment, q: PaymentSearch, now: Date): boolean {
  return (!q.order || p.order.number === q.order.trim()) && (!q.status || paymentReading(p, now).status === q.status);
}

export async function paymentDetail(deps: AdminDeps, paymentId: string) {
  const payment = await deps.store.findPayment(paymentId);
  if (!payment) throw new ApiError('PAYMENT_NOT_FOUND');
  const audit = await deps.audit.forTarget(paymentId, 100);
  // Amounts in decimals, like everywhere else in the portal (amountMinor stays for tools).
  const transactions = payment.transactions.map((t) => ({ ...t, amount: formatMinor(t.amountMinor, payment.order.currency) }));
  return { payment: paymentSummary(payment, deps.clock.now()), transactions, audit };
}

/** Pending authorizations, the soonest to expire first. */
export async function captureQueue(deps: AdminDeps) {
  const now = deps.clock.now();
  const queued = await deps.store.due(QUEUES.capture, new Date('9999-12-31T00:00:00.000Z'), ADMIN_LIMITS.queueSize);
  // Operators know merchants by name: the directory (by the lookup index) names them.
  const names = new Map((await deps.merchants.list(ADMIN_LIMITS.merchantsPerSearch)).map((m) => [m.merchantKey, m.name]));
  const payments: Payment[] = [];
  for (let i = 0; i < queued.length; i += 100) payments.push(...(await deps.store.findPayments(queued.slice(i, i + 100).map((q) => q.paymentId))));
  return payments
    .filter((p) => p.status === 'pending')
    .sort((a, b) => (a.authorizationExpiresAt ?? '').localeCompare(b.authorizationExpiresAt ?? ''))
    .map((p): PaymentListEntry => ({ ...paymentSummary(p, now), ...(names.has(p.merchantKey) ? { merchant_name: names.get(p.merchantKey) } : {}) }));
}

const snapshot = (p: Payment): Record<string, unknown> => ({
  status: p.status,
  ...(p.reason ? { reason: p.reason } : {}),
  ...(p.capturedMinor !== undefined ? { captured_amount: formatMinor(p.capturedMinor, p.order.currency) } : {}),
  ...(p.refundedMinor ? { refunded_amount: formatMinor(p.refundedMinor, p.order.currency) } : {}),
});

/**
 * An amount an operator typed, in the payment's currency. Operators write "100", "12.5" or "12,50"
 * for 100.00, 12.50 and 12.50: the portal reads those as the merchant API never would (it keeps the
 * platform's exact literal rules), and answers a malformed one with the form it wants.
 */
export function operatorAmount(typed: string, currency: string): { literal: string; amountMinor: number } {
  const exponent = currencyExponent(currency) ?? 2;
  const m = /^\s*(\d{1,15})(?:[.,](\d*))?\s*$/.exec(typed);
  const example = exponent === 0 ? '1250' : `12.${'5'.padEnd(exponent, '0')}`;
  const wrong = () => invalidRequest([{ path: 'amount', message: `Write the amount in ${currency} with ${exponent === 0 ? 'no decimals' : `up to ${exponent} decimals`}, e.g. ${example}.` }]);
  if (!m || (m[2] ?? '').length > exponent || (exponent === 0 && m[2] !== undefined)) throw wrong();
  const literal = exponent === 0 ? String(Number(m[1])) : `${String(Number(m[1]))}.${(m[2] ?? '').padEnd(exponent, '0')}`;
  const parsed = parseAmount(literal, currency);
  if (parsed === 'not-positive') throw invalidRequest([{ path: 'amount', message: 'The amount must be more than zero.' }]);
  if (typeof parsed === 'string') throw wrong();
  return { literal: parsed.literal, amountMinor: parsed.amountMinor };
}

/** What is still left to refund: captured (or paid) minus what refunds hold or took. */
export const leftToRefundMinor = (p: Payment): number => Math.max(0, refundableMinor(p) - (p.refundHeldMinor ?? p.refundedMinor ?? 0));

/** The refusals an operator reads, with the numbers that explain them (the merchant API keeps the catalog's words). */
function operatorRefusal(e: ApiError, action: PaymentAction, p: Payment, amount: string | undefined): string {
  const money = (minor: number) => `${formatMinor(minor, p.order.currency)} ${p.order.currency}`;
  if (e.entry === ERRORS.REFUND_AMOUNT_TOO_BIG) return `Refund amount${amount ? ` ${amount}` : ''} is bigger than what is left to refund (${money(leftToRefundMinor(p))}).`;
  if (e.entry === ERRORS.CAPTURE_AMOUNT_TOO_BIG && action === 'capture') return `Capture amount${amount ? ` ${amount}` : ''} is bigger than the authorized amount (${money(p.order.amountMinor)}).`;
  return e.fieldErrors.length ? e.fieldErrors.map((f) => `${f.path}: ${f.message}`).join(' ') : e.message;
}

export interface ActionOutcome {
  readonly payment_id: string;
  readonly action: PaymentAction;
  /** `not-started`: a bulk request ran out of time before this payment; nothing was done to it. */
  readonly outcome: 'done' | 'refused' | 'failed' | 'not-started';
  readonly status?: PaymentStatus;
  readonly message?: string;
}

/**
 * An operator's action on a payment, with the same rules and conditional writes as the API and
 * the capture job. Every attempt, done or refused, is written to the audit log with the state
 * before and after.
 */
export async function operatorAction(deps: AdminDeps, actor: string, paymentId: string, action: PaymentAction, typedAmount?: string, answerBy?: Date): Promise<ActionOutcome> {
  const before = await deps.store.findPayment(paymentId);
  if (!before) throw new ApiError('PAYMENT_NOT_FOUND');
  let outcome: ActionOutcome['outcome'] = 'done';
  let message: string | undefined;
  let amount: { literal: string; amountMinor: number } | undefined;
  try {
    amount = typedAmount === undefined || typedAmount.trim() === '' ? undefined : operatorAmount(typedAmount, before.order.currency);
    switch (action) {
      case 'capture': {
        const result: CaptureResult = await capture(deps, before, amount?.amountMinor ?? before.order.amountMinor, `operator:${actor}`, undefined, answerBy);
        if (result.kind === 'declined') [outcome, message] = ['failed', result.reason];
        if (result.kind === 'taken') [outcome, message] = ['refused', 'Someone else captured or released this payment first.'];
        if (result.kind === 'in-progress') message = CAPTURE_IN_PROGRESS_REASON;
        break;
      }
      case 'release': {
        const result = await release(deps, before, `operator:${actor}`, undefined, answerBy);
        if (result.kind === 'taken') [outcome, message] = ['refused', 'Someone else captured or released this payment first.'];
        if (result.kind === 'in-progress') message = RELEASE_IN_PROGRESS_REASON;
        if (result.kind === 'declined') [outcome, message] = ['failed', result.reason];
        break;
      }
      case 'void': {
        const result = await voidPayment(deps, before.merchantKey, { payment_id: paymentId }, { actor: `operator:${actor}` });
        if (result.status === 'FAIL') [outcome, message] = ['failed', result.reason];
        break;
      }
      case 'refund':
        await refundPayment(deps, before.merchantKey, { payment_id: paymentId, amount: amount?.literal ?? formatMinor(leftToRefundMinor(before), before.order.currency) }, { actor: `operator:${actor}` });
        break;
    }
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    outcome = 'refused';
    message = operatorRefusal(e, action, (await deps.store.findPayment(paymentId)) ?? before, amount?.literal ?? typedAmount);
  }
  const after = (await deps.store.findPayment(paymentId)) ?? before;
  const audited = amount?.literal ?? (typedAmount?.trim() ? typedAmount.trim().slice(0, 40) : undefined);
  await deps.audit.append({
    id: deps.ids.transId(),
    at: deps.clock.now().toISOString(),
    actor,
    action: `payment.${action}${audited ? ` ${audited}` : ''}`,
    target: paymentId,
    targetKind: 'payment',
    before: snapshot(before),
    after: snapshot(after),
    outcome,
    ...(message ? { detail: message } : {}),
  });
  return { payment_id: paymentId, action, outcome, status: after.status, ...(message ? { message } : {}) };
}

export const RELEASE_IN_PROGRESS_REASON = 'The release is being processed; its outcome follows in the payment status.';
export const NOT_STARTED_REASON = 'Not started: the request ran out of time before this payment. Nothing was done to it; select it and try again.';

/** What a bulk request leaves for the answer when it stops starting payments: the intent write, the audit entry, the answer. */
export const BULK_START_MARGIN_MS = 1_000;
/** What a request leaves of its function's time to send its answer (as the merchant routes do). */
export const ANSWER_MARGIN_MS = 1_500;

/** When a bulk request stops: no payment started after `startBy`; a started one's answer waited for until `answerBy`. */
export interface BulkDeadline {
  /** Epoch milliseconds (real time, as a function's deadline is). */
  readonly startBy: number;
  readonly answerBy: Date;
}

/** A bulk request's deadline from its function's end (the Lambda context's remaining time). */
export function bulkDeadlineOf(functionEnd: Date): BulkDeadline {
  const answerBy = new Date(functionEnd.getTime() - ANSWER_MARGIN_MS);
  return { startBy: answerBy.getTime() - BULK_START_MARGIN_MS, answerBy };
}

/**
 * The same action on many payments (bounded), each with its own audit entry. A capture takes each
 * payment's own amount from `amounts` (what the operator typed in its row); a payment without one
 * is captured in full. Amounts for payments not selected, or with a release, are refused: an
 * amount the request carries is never silently ignored. With a deadline, payments are started only
 * until `startBy` (each waited for until `answerBy` at most, then "being processed"); the rest are
 * answered `not-started`, so a big batch against a slow gateway answers per row instead of timing out.
 */
export async function bulkAction(
  deps: AdminDeps,
  actor: string,
  action: 'capture' | 'release',
  paymentIds: readonly string[],
  amounts: Readonly<Record<string, string>> = {},
  deadline?: BulkDeadline,
): Promise<ActionOutcome[]> {
  if (!paymentIds.length || paymentIds.length > ADMIN_LIMITS.bulkSize) {
    throw invalidRequest([{ path: 'payment_ids', message: `Select 1 to ${ADMIN_LIMITS.bulkSize} payments.` }]);
  }
  const stray = Object.keys(amounts).filter((id) => !paymentIds.includes(id));
  if (action === 'release' && Object.keys(amounts).length) throw invalidRequest([{ path: 'amounts', message: 'A release has no amount: it releases the whole authorization.' }]);
  if (stray.length) throw invalidRequest([{ path: 'amounts', message: `Amounts for payments that are not selected: ${stray.slice(0, 5).join(', ')}.` }]);
  const results: ActionOutcome[] = [];
  for (const id of paymentIds) {
    // Out of time: the rest are answered as not started (nothing moved), never left to a timeout's 5xx.
    if (deadline && Date.now() >= deadline.startBy) {
      results.push({ payment_id: id, action, outcome: 'not-started', message: NOT_STARTED_REASON });
      continue;
    }
    try {
      results.push(await operatorAction(deps, actor, id, action, amounts[id], deadline?.answerBy));
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      results.push({ payment_id: id, action, outcome: 'refused', status: 'prepare', message: e.message });
    }
  }
  return results;
}

const SETTINGS_KEYS: readonly (keyof MerchantSettings)[] = ['name', 'dms', 'autoCaptureDelayMinutes', 'returnParams', 'notificationUrl', 'methods', 'maxDeclines', 'branding', 'frameAncestors', 'preRouting'];

const settingsOf = (m: Merchant): Record<string, unknown> => Object.fromEntries(SETTINGS_KEYS.filter((k) => m[k] !== undefined).map((k) => [k, m[k]]));

export async function merchantList(deps: AdminDeps) {
  return (await deps.merchants.list(200)).map((m) => ({ merchant_key: m.merchantKey, ...settingsOf(m), updated_at: m.updatedAt }));
}

export async function merchantDetail(deps: AdminDeps, merchantKey: string) {
  const m = await deps.merchants.find(merchantKey);
  if (!m) throw new ApiError('MERCHANT_NOT_FOUND');
  return { merchant_key: m.merchantKey, settings: settingsOf(m), created_at: m.createdAt, updated_at: m.updatedAt, audit: await deps.audit.forTarget(`merchant:${merchantKey}`, 50) };
}

/**
 * Reads the portal's settings form (snake_case JSON; null clears an optional setting) into a
 * settings patch, or the field errors.
 */
export function parseSettingsPatch(body: Record<string, unknown>, destinations?: DestinationPolicy): { settings: Partial<MerchantSettings> } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const out: Record<string, unknown> = {};
  const has = (k: string) => Object.prototype.hasOwnProperty.call(body, k);
  const take = (from: string, to: keyof MerchantSettings, check: (v: unknown) => boolean, nullable = true) => {
    if (!has(from)) return;
    const v = body[from];
    if (v === null && nullable) out[to] = undefined;
    else if (check(v)) out[to] = v;
    else errors.push({ path: from, message: 'This value is not valid.' });
  };
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  take('name', 'name', (v) => typeof v === 'string', false);
  take('dms', 'dms', (v) => typeof v === 'boolean', false);
  take('return_params', 'returnParams', (v) => typeof v === 'boolean', false);
  take('auto_capture_delay_minutes', 'autoCaptureDelayMinutes', (v) => typeof v === 'number');
  take('notification_url', 'notificationUrl', (v) => typeof v === 'string');
  take('methods', 'methods', strings);
  take('max_declines', 'maxDeclines', (v) => typeof v === 'number', false);
  take('frame_ancestors', 'frameAncestors', strings);
  if (has('branding')) {
    const b = body.branding as { primary_color?: unknown; logo_url?: unknown } | null;
    if (b === null) out.branding = undefined;
    else if (typeof b === 'object' && (b.primary_color === undefined || b.primary_color === null || typeof b.primary_color === 'string') && (b.logo_url === undefined || b.logo_url === null || typeof b.logo_url === 'string')) {
      out.branding = { primaryColor: b.primary_color ?? undefined, logoUrl: b.logo_url ?? undefined };
    } else errors.push({ path: 'branding', message: 'This value is not valid.' });
  }
  if (has('pre_routing')) {
    const rules = body.pre_routing;
    const valid = rules === null || (Array.isArray(rules) && rules.length <= 20 && rules.every((r) => {
      const x = r as Record<string, unknown>;
      return x && typeof x === 'object' && strings(x.methods) && (x.methods as string[]).length > 0 &&
        // A rule naming no method the page knows would offer the customer nothing to pay with.
        (x.methods as string[]).every((m) => (AVAILABLE_METHODS as readonly string[]).includes(m)) &&
        new Set(x.methods as string[]).size === (x.methods as string[]).length &&
        !(Number.isSafeInteger(x.min_amount_minor) && Number.isSafeInteger(x.max_amount_minor) && (x.min_amount_minor as number) > (x.max_amount_minor as number)) &&
        (x.currency === undefined || (typeof x.currency === 'string' && /^[A-Z]{3}$/.test(x.currency))) &&
        (x.min_amount_minor === undefined || Number.isSafeInteger(x.min_amount_minor)) &&
        (x.max_amount_minor === undefined || Number.isSafeInteger(x.max_amount_minor));
    }));
    if (!valid) errors.push({ path: 'pre_routing', message: 'This value is not valid.' });
    else out.preRouting = rules === null ? undefined : (rules as Record<string, unknown>[]).map((r) => ({
      methods: r.methods as string[],
      ...(r.currency !== undefined ? { currency: r.currency as string } : {}),
      ...(r.min_amount_minor !== undefined ? { minAmountMinor: r.min_amount_minor as number } : {}),
      ...(r.max_amount_minor !== undefined ? { maxAmountMinor: r.max_amount_minor as number } : {}),
    }));
  }
  if (errors.length) return { errors };
  const problems = settingsProblems(out as Partial<MerchantSettings>, destinations);
  if (problems.length) return { errors: problems.map((message) => ({ path: 'settings', message })) };
  return { settings: out as Partial<MerchantSettings> };
}

/** Changes a merchant's settings (validated as the CLI validates them), audited before/after. */
export async function changeMerchantSettings(deps: AdminDeps, actor: string, merchantKey: string, patch: Partial<MerchantSettings>) {
  const before = await deps.merchants.find(merchantKey);
  if (!before) throw new ApiError('MERCHANT_NOT_FOUND');
  const after = await updateMerchantSettings(deps, merchantKey, patch).catch((e: unknown) => {
    if (e instanceof MerchantAdminError) throw invalidRequest([{ path: 'settings', message: e.message }]);
    throw e;
  });
  await auditMerchantChange(deps, actor, 'merchant.settings', before, after);
  return { merchant_key: merchantKey, settings: settingsOf(after) };
}

type MerchantAdminDeps = ManageMerchantsDeps & Pick<AdminDeps, 'audit' | 'ids'>;

/**
 * A new merchant, from the portal (an admin) or the CLI (`cli:<login>`): its settings in the table
 * (a conditional put: an existing key is refused, never overwritten), its signing password and
 * webhook secret in the secret store, and an audit entry without them. The credentials are in the
 * answer only; whoever created the merchant hands them over. Refusals are MerchantAdminErrors.
 */
export async function createMerchantAudited(
  deps: MerchantAdminDeps,
  actor: string,
  input: { name: string; merchantKey?: string; settings?: Partial<MerchantSettings> },
): Promise<MerchantCredentials> {
  const created = await createMerchant(deps, input);
  const merchant = await deps.merchants.find(created.merchant_key);
  if (merchant) await auditMerchantChange(deps, actor, 'merchant.create', undefined, merchant);
  return created;
}

/** A new signing password for a merchant, audited (the entry says only that it was rotated). */
export async function rotatePasswordAudited(deps: MerchantAdminDeps, actor: string, merchantKey: string): Promise<MerchantCredentials> {
  const merchant = await deps.merchants.find(merchantKey);
  if (!merchant) throw new ApiError('MERCHANT_NOT_FOUND');
  const rotated = await rotatePassword(deps, merchantKey);
  await auditMerchantChange(deps, actor, 'merchant.rotate-password', undefined, merchant);
  return rotated;
}

/** A new webhook secret (the previous one signs beside it for a day), audited without either. */
export async function rotateWebhookSecretAudited(deps: MerchantAdminDeps, actor: string, merchantKey: string): Promise<Awaited<ReturnType<typeof rotateWebhookSecret>>> {
  const merchant = await deps.merchants.find(merchantKey);
  if (!merchant) throw new ApiError('MERCHANT_NOT_FOUND');
  const rotated = await rotateWebhookSecret(deps, merchantKey);
  await auditMerchantChange(deps, actor, 'merchant.rotate-webhook-secret', undefined, merchant);
  return rotated;
}

/**
 * One audit entry for a change of a merchant, from the portal or the CLI (actor `cli:<login>`):
 * its settings before and after. Credentials are never in an entry: a rotation records only that
 * it happened.
 */
export async function auditMerchantChange(
  deps: Pick<AdminDeps, 'audit' | 'ids' | 'clock'>,
  actor: string,
  action: 'merchant.settings' | 'merchant.create' | 'merchant.rotate-password' | 'merchant.rotate-webhook-secret',
  before: Merchant | undefined,
  after: Merchant,
): Promise<void> {
  await deps.audit.append({
    id: deps.ids.transId(),
    at: deps.clock.now().toISOString(),
    actor,
    action,
    target: `merchant:${after.merchantKey}`,
    targetKind: 'merchant',
    ...(before ? { before: settingsOf(before) } : {}),
    after: action === 'merchant.settings' || action === 'merchant.create' ? settingsOf(after) : { rotated: action === 'merchant.rotate-password' ? 'password' : 'webhook secret' },
    outcome: 'done',
  });
}

export interface AuditSearch {
  readonly cursor?: string;
  /** Who: an operator's user name or a `cli:` actor (or part of it, case-insensitive). */
  readonly actor?: string;
  /** The action or its start ("payment.", "payment.refund", "merchant.settings"). */
  readonly action?: string;
  /** A payment id, or `merchant:<key>`: read through the lookup index by target. */
  readonly target?: string;
}

/** Pages of the day-ordered log one filtered audit search reads at most. */
const AUDIT_PAGES_PER_SEARCH = 10;

function auditCursorOf(sealed: string): string {
  const { audit } = cursorFields(sealed);
  if (typeof audit !== 'string') throw BAD_CURSOR();
  return audit;
}

export async function auditPage(deps: AdminDeps, search: AuditSearch = {}): Promise<{ entries: AuditEntry[]; cursor?: string; breaks: DayBreak[] }> {
  const actor = search.actor?.trim().toLowerCase();
  const action = search.action?.trim();
  const keep = (e: AuditEntry) => (!actor || e.actor.toLowerCase().includes(actor)) && (!action || e.action.startsWith(action));
  let page: { entries: AuditEntry[]; cursor?: string };
  if (search.target?.trim()) {
    // By target: the target's own history from the lookup index, newest first (the last 100).
    page = { entries: (await deps.audit.forTarget(search.target.trim(), 100)).filter(keep) };
  } else {
    // Newest first through the day partitions; with a filter, as many pages as the budget allows.
    // The log's own cursor travels sealed: a forged or malformed one is a 400, never read.
    let cursor = search.cursor !== undefined ? auditCursorOf(search.cursor) : undefined;
    const entries: AuditEntry[] = [];
    let reads = 0;
    do {
      const read = await refusingBadCursor(cursor, () => deps.audit.list({ limit: ADMIN_LIMITS.pageSize, cursor, until: deps.clock.now(), days: 90 }));
      entries.push(...read.entries.filter(keep));
      cursor = read.cursor;
    } while ((actor || action) && cursor && entries.length < ADMIN_LIMITS.pageSize && ++reads < AUDIT_PAGES_PER_SEARCH);
    page = { entries, ...(cursor ? { cursor: sealCursor({ audit: cursor }) } : {}) };
  }
  // The chains of the days this page shows are checked whole: a break anywhere in them is shown.
  const days = [...new Set(page.entries.map((e) => e.at.slice(0, 10)))];
  return { ...page, breaks: (await verifyAuditDays(deps, days)).filter((d): d is DayBreak => d.break !== undefined) };
}

export interface DayBreak {
  readonly day: string;
  readonly entries: number;
  readonly break?: ChainBreak;
}

/** Walks each day's chain (domain/audit-chain.ts); a day without entries is whole. */
export async function verifyAuditDays(deps: Pick<AdminDeps, 'audit'>, days: readonly string[]): Promise<DayBreak[]> {
  return Promise.all(
    days.map(async (day) => {
      const entries = await deps.audit.day(day);
      const found = firstBreak(entries);
      return { day, entries: entries.length, ...(found ? { break: found } : {}) };
    }),
  );
}
