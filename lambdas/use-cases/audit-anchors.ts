import { anchorFinding, chainOrder, dayLinkBreak, firstBreak, type AnchorFinding, type ChainBreak } from '../domain/audit-chain';
import type { AuditAnchorStore } from '../ports/audit-anchors';
import type { Clock } from '../ports/clock';
import type { AuditLog } from '../ports/operators';

const DAY_MS = 24 * 3600_000;
/**
 * A day is closed this long after its UTC midnight: an entry is dated by its writer before the
 * append, and an append ends within its function's timeout (29 s at most, a few retries), so a
 * quarter of an hour leaves no late entry behind a close.
 */
export const CLOSE_AFTER_MS = 15 * 60_000;
/** Days the export looks back for a close it has not written yet (after failed runs). */
export const EXPORT_LOOKBACK_DAYS = 7;

export interface AnchorDeps {
  readonly audit: AuditLog;
  readonly anchors: AuditAnchorStore;
  readonly clock: Clock;
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const isClosed = (day: string, now: Date) => now.getTime() >= Date.parse(`${day}T00:00:00Z`) + DAY_MS + CLOSE_AFTER_MS;

export interface ExportReport {
  readonly written: readonly string[];
  readonly existing: number;
}

/**
 * The scheduled export (lib/jobs.ts ExportAuditAnchors): the final head of every closed day of the
 * last EXPORT_LOOKBACK_DAYS not yet closed in the store (a day without entries too: it cannot be
 * filled in afterwards), and a checkpoint of today's head, so a rewrite of today is caught from the
 * next run on rather than from tomorrow's close. Anchors are write-once: a second run finds them.
 */
export async function exportAuditAnchors(deps: AnchorDeps): Promise<ExportReport> {
  const now = deps.clock.now();
  const written: string[] = [];
  let existing = 0;
  const record = (outcome: 'written' | 'exists', name: string) => {
    if (outcome === 'written') written.push(name);
    else existing++;
  };
  for (let back = EXPORT_LOOKBACK_DAYS; back >= 0; back--) {
    const day = dayOf(now.getTime() - back * DAY_MS);
    const closed = isClosed(day, now);
    const head = await deps.audit.head(day);
    if (!closed && !head) continue;
    const anchor = { day, seq: head?.seq ?? 0, hash: head?.hash ?? null, closed, at: now.toISOString() };
    record(await deps.anchors.write(anchor), `${day} ${closed ? 'closed' : 'checkpoint'} at entry ${anchor.seq}`);
  }
  return { written, existing };
}

export interface VerifiedDay {
  readonly day: string;
  readonly entries: number;
  /** The first break of the day's own chain, or of its link to the previous day. */
  readonly break?: ChainBreak;
  readonly anchor: AnchorFinding;
}

/** Whether a verified day is whole: no break, and no anchor that disagrees or should exist and does not. */
export const dayIsWhole = (d: VerifiedDay): boolean => !d.break && d.anchor.status !== 'differs' && d.anchor.status !== 'missing';

/**
 * verify-audit: each day's chain, its link to the previous day's head, and its entries against the
 * anchors exported for it. Days before the first anchor ever written (before anchoring began) are
 * checked by their chains alone and reported `unanchored`.
 */
export async function verifyAnchoredDays(deps: AnchorDeps, days: readonly string[]): Promise<VerifiedDay[]> {
  const now = deps.clock.now();
  const firstAnchored = await deps.anchors.firstDay();
  return Promise.all(
    days.map(async (day): Promise<VerifiedDay> => {
      const entries = await deps.audit.day(day);
      const chain = chainOrder(entries);
      const first = chain[0];
      const found = firstBreak(entries) ?? (first?.prevDay !== undefined ? dayLinkBreak(first, await deps.audit.day(first.prevDay)) : undefined);
      const anchor = anchorFinding(chain, await deps.anchors.ofDay(day), { name: day, closed: isClosed(day, now), beforeAnchoring: firstAnchored === undefined || day < firstAnchored });
      return { day, entries: entries.length, ...(found ? { break: found } : {}), anchor };
    }),
  );
}
