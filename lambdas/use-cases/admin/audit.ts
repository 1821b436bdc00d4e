import { firstBreak, type ChainBreak } from '../../domain/audit-chain';
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
}

/** Pages of the day-ordered log one filtered audit search reads at most. */
const AUDIT_PAGES_PER_SEARCH = 10;

export interface DayBreak {
  readonly day: string;
  readonly entries: number;
  readonly break?: ChainBreak;
}

export async function auditPage(deps: AdminReadDeps, search: AuditSearch = {}): Promise<{ entries: AuditEntry[]; cursor?: string; breaks: DayBreak[] }> {
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
    let cursor = search.cursor !== undefined ? auditCursorFrom(search.cursor) : undefined;
    const entries: AuditEntry[] = [];
    let reads = 0;
    do {
      const read = await refusingBadCursor(cursor, () => deps.audit.list({ limit: ADMIN_LIMITS.pageSize, cursor, until: deps.clock.now(), days: 90 }));
      entries.push(...read.entries.filter(keep));
      cursor = read.cursor;
    } while ((actor || action) && cursor && entries.length < ADMIN_LIMITS.pageSize && ++reads < AUDIT_PAGES_PER_SEARCH);
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
