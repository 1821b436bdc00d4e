import { RetryLaterError } from '../../domain/errors';
import { inParallel } from '../../domain/parallel';
import type { SearchLeases } from '../../ports/operators';
import { ADMIN_LIMITS, type AdminReadDeps } from './deps';
import { START, countPosition, cursorOf, searchPosition, type Position } from './search-cursor';
import { inBudget, nextOf, dayOf, planSearch, readOn, tooBroad, type FoundPayment, type PaymentSearch, type SearchBudget } from './search-plan';

/** Limits of one count or export request; the portal asks again with the cursor until it is done. */
export const BULK_LIMITS = {
  /** Merchant days counted per request, from the index alone (merchant and days the only criteria). */
  countDaysPerRequest: 64,
  /** Merchant days counted at once. */
  countConcurrency: 4,
  /**
   * Index pages read per request when a criterion needs the payments themselves (a status too: the
   * index holds keys only). A page filtered by status reads up to 4 × pageSize stored statuses.
   */
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

/** Payments a search found, as read at `now`, and the cursor of the next page when there is more. */
export interface FoundPage {
  readonly found: readonly FoundPayment[];
  readonly now: Date;
  readonly cursor?: string;
}

/**
 * A page of a search (planSearch says how it reads): a page is filled from as many index pages as
 * the read budget allows, so a rare match may need "Next page". Paged with an opaque cursor; every
 * page does a bounded number of index reads.
 */
export function searchPayments(deps: AdminReadDeps, q: PaymentSearch): Promise<FoundPage> {
  return readPage(deps, q, { want: ADMIN_LIMITS.pageSize, maxReads: ADMIN_LIMITS.maxQueriesPerSearch, pageLimit: ADMIN_LIMITS.pageSize });
}

/**
 * One part of a search's export: up to `exportRows` matching payments, newest first, read page by
 * page through the index (a part never holds more), and the cursor of the next part.
 */
export function exportPayments(deps: AdminReadDeps, q: PaymentSearch, budget?: SearchBudget): Promise<FoundPage> {
  return readPage(deps, q, { want: BULK_LIMITS.exportRows, maxReads: BULK_LIMITS.readsPerRequest, pageLimit: BULK_LIMITS.pageSize }, budget);
}

async function readPage(deps: AdminReadDeps, q: PaymentSearch, limits: Parameters<typeof readOn>[3], budget?: SearchBudget): Promise<FoundPage> {
  const plan = await planSearch(deps, q);
  if (plan.fixed) return { found: plan.fixed.map(plan.found), now: plan.now };
  const read = await readOn(deps, plan, q.cursor ? searchPosition(q.cursor) : START, limits, budget);
  return { found: read.found.map(plan.found), now: plan.now, ...(read.more ? { cursor: cursorOf(read.position) } : {}) };
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

/**
 * How many payments match a search. Criteria the search index answers (merchant, days) are counted
 * there without reading a payment; the others, a status among them, read the payments page by page
 * as an export does: half a read unit for each entry's stored status, two more for each payment
 * of that status (its state and details read consistently), where counting the index costs half
 * a unit for some 20 entries. One request does a bounded amount of work: `complete` is false and
 * `cursor` resumes the count.
 */
export async function countPayments(deps: AdminReadDeps, q: PaymentSearch, budget?: SearchBudget): Promise<{ total: number; complete: boolean; cursor?: string }> {
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
        plan.merchants[p.merchant] === undefined ? Promise.resolve(0) : deps.store.countPaymentsOfDay({ merchantKey: plan.merchants[p.merchant]!, day: dayOf(plan, p) }),
      );
      total += counts.reduce((a, b) => a + b, 0);
      position = nextOf(plan, round[round.length - 1]!);
    }
  } else {
    const read = await readOn(deps, plan, position, { want: Number.POSITIVE_INFINITY, maxReads: BULK_LIMITS.readsPerRequest, pageLimit: BULK_LIMITS.pageSize }, budget);
    total += read.found.length;
    position = read.position;
  }
  const complete = position.day >= plan.days;
  return { total, complete, ...(complete ? {} : { cursor: cursorOf({ ...position, counted: total }) }) };
}
