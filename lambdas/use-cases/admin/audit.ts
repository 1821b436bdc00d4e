import { firstBreak, type ChainBreak } from '../../domain/audit-chain';
import { invalidRequest, type FieldError } from '../../domain/errors';
import type { AuditEntry } from '../../ports/operators';
import { ADMIN_LIMITS, type AdminReadDeps } from './deps';
import { auditCursorFrom, auditCursorOf, refusingBadCursor } from './search-cursor';

export interface AuditSearch {
  readonly cursor?: string;
  /** Who: an operator's user name or a `cli:` actor (or part of it, case-insensitive). */
  readonly actor?: string;
  /** The action or its start ("payment.", "payment.refund", "merchant.settings"). */
  readonly action?: string;
  /** A payment id, or `merchant:<key>`: read through the lookup index by target. */
  readonly target?: string;
  /** The first and last UTC day (YYYY-MM-DD) of the entries wanted; by default the last AUDIT_DEFAULT_DAYS days. */
  readonly from?: string;
  readonly to?: string;
}

/** Pages of the day-ordered log one filtered audit search reads at most. */
const AUDIT_PAGES_PER_SEARCH = 10;
/** Days an audit search covers when no start is given. */
export const AUDIT_DEFAULT_DAYS = 90;
/** Days one audit search or export may cover: each is a query of its day's partition, even when empty. */
export const AUDIT_MAX_DAYS = 92;
/** One part of an audit export: at most this many entries, or this many pages of the log read. */
export const AUDIT_EXPORT_PART = { entries: 1000, pages: 40, pageSize: 100 } as const;

const DAY_MS = 24 * 3600_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const isDay = (text: string): boolean => DAY.test(text) && new Date(`${text}T00:00:00Z`).toISOString().slice(0, 10) === text;

/** The days a search covers, newest first from `to` (never after today): refused with the field named when they do not make a range. */
export interface AuditWindow {
  readonly until: Date;
  readonly days: number;
  readonly from: string;
  readonly to: string;
}

export function auditWindow(search: AuditSearch, now: Date): AuditWindow {
  const from = search.from?.trim() || undefined;
  const to = search.to?.trim() || undefined;
  const problems: FieldError[] = [];
  if (from !== undefined && !isDay(from)) problems.push({ path: 'from', message: 'Enter a day as YYYY-MM-DD.' });
  if (to !== undefined && !isDay(to)) problems.push({ path: 'to', message: 'Enter a day as YYYY-MM-DD.' });
  if (problems.length) throw invalidRequest(problems);
  const today = now.toISOString().slice(0, 10);
  const last = to !== undefined && to < today ? to : today;
  const first = from ?? new Date(Date.parse(last) - (AUDIT_DEFAULT_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
  if (to !== undefined && from !== undefined && from > to) throw invalidRequest([{ path: 'from', message: 'The first day should not be after the last.' }]);
  const days = Math.floor((Date.parse(last) - Date.parse(first)) / DAY_MS) + 1;
  if (days > AUDIT_MAX_DAYS) throw invalidRequest([{ path: 'from', message: `The date range should cover at most ${AUDIT_MAX_DAYS} days.` }]);
  // A range wholly after today has no entries: zero days, nothing read.
  const until = last === today ? now : new Date(`${last}T23:59:59.999Z`);
  return { until, days: Math.max(days, 0), from: first, to: last };
}

/** The search's criteria as one check of an entry (the days are the window's). */
function auditFilter(search: AuditSearch, window: AuditWindow): (e: AuditEntry) => boolean {
  const actor = search.actor?.trim().toLowerCase();
  const action = search.action?.trim();
  return (e) => (!actor || e.actor.toLowerCase().includes(actor)) && (!action || e.action.startsWith(action)) && e.at.slice(0, 10) >= window.from && e.at.slice(0, 10) <= window.to;
}

export interface DayBreak {
  readonly day: string;
  readonly entries: number;
  readonly break?: ChainBreak;
}

export async function auditPage(deps: AdminReadDeps, search: AuditSearch = {}): Promise<{ entries: AuditEntry[]; cursor?: string; breaks: DayBreak[] }> {
  const window = auditWindow(search, deps.clock.now());
  const keep = auditFilter(search, window);
  const filtered = Boolean(search.actor?.trim() || search.action?.trim());
  let page: { entries: AuditEntry[]; cursor?: string };
  if (search.target?.trim()) {
    // By target: the target's own history from the lookup index, newest first (the last 100).
    page = { entries: (await deps.audit.forTarget(search.target.trim(), 100)).filter(keep) };
  } else {
    // Newest first through the day partitions; with a filter, as many pages as the budget allows.
    // The log's own cursor travels sealed: a forged or malformed one is a 400, never read.
    let cursor = search.cursor !== undefined ? auditCursorFrom(search.cursor) : undefined;
    const entries: AuditEntry[] = [];
    let reads = 0;
    do {
      const read = await refusingBadCursor(cursor, () => deps.audit.list({ limit: ADMIN_LIMITS.pageSize, cursor, until: window.until, days: window.days }));
      entries.push(...read.entries.filter(keep));
      cursor = read.cursor;
    } while (filtered && cursor && entries.length < ADMIN_LIMITS.pageSize && ++reads < AUDIT_PAGES_PER_SEARCH);
    page = { entries, ...(cursor ? { cursor: auditCursorOf(cursor) } : {}) };
  }
  // The chains of the days this page shows are checked whole: a break anywhere in them is shown.
  const days = [...new Set(page.entries.map((e) => e.at.slice(0, 10)))];
  return { ...page, breaks: (await verifyAuditDays(deps, days)).filter((d): d is DayBreak => d.break !== undefined) };
}

/** Walks each day's chain (domain/audit-chain.ts); a day without entries is whole. */
export async function verifyAuditDays(deps: Pick<AdminReadDeps, 'audit'>, days: readonly string[]): Promise<DayBreak[]> {
  return Promise.all(
    days.map(async (day) => {
      const entries = await deps.audit.day(day);
      const found = firstBreak(entries);
      return { day, entries: entries.length, ...(found ? { break: found } : {}) };
    }),
  );
}

/**
 * One part of the search's export, newest first: up to AUDIT_EXPORT_PART entries or pages of the
 * log read, and the cursor of the next part (sealed like the page's). By target, the target's
 * history (its last 1,000 entries) is one part. `part` holds the limits (tests make them small).
 */
export async function exportAuditPart(deps: AdminReadDeps, search: AuditSearch, part: { readonly entries: number; readonly pages: number; readonly pageSize: number } = AUDIT_EXPORT_PART): Promise<{ entries: AuditEntry[]; cursor?: string }> {
  const window = auditWindow(search, deps.clock.now());
  const keep = auditFilter(search, window);
  if (search.target?.trim()) return { entries: (await deps.audit.forTarget(search.target.trim(), part.entries)).filter(keep) };
  let cursor = search.cursor !== undefined ? auditCursorFrom(search.cursor) : undefined;
  const entries: AuditEntry[] = [];
  let reads = 0;
  do {
    const limit = Math.min(part.pageSize, part.entries - entries.length);
    const read = await refusingBadCursor(cursor, () => deps.audit.list({ limit, cursor, until: window.until, days: window.days }));
    entries.push(...read.entries.filter(keep));
    cursor = read.cursor;
  } while (cursor && entries.length < part.entries && ++reads < part.pages);
  return { entries, ...(cursor ? { cursor: auditCursorOf(cursor) } : {}) };
}
