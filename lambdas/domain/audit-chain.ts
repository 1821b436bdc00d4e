/**
 * The audit log is tamper-evident: its entries form one hash chain across days. Entry n of a day
 * carries its sequence number, the hash of entry n-1 (`prevHash`) and its own hash over that and its
 * canonical content. A day's first entry links to the previous day's head (`prevDay`, `prevSeq`,
 * `prevHash`); only a chain start links to GENESIS: the first day ever, days written before days were
 * linked (they keep verifying as they are), or a day after more than LINK_LOOKBACK_DAYS without
 * entries. Changing an entry breaks its hash; removing one leaves a gap in the sequence; reordering
 * breaks the links. Appends never race into a fork: entry n is written with a condition that slot n
 * is free (see adapters/dynamodb/audit-log.ts).
 *
 * A writer with table access could still rewrite a whole day and every day after it consistently.
 * The anchors stop that: the heads are exported on a schedule to storage nobody can overwrite (an S3
 * bucket with Object Lock, lib/constructs/audit-anchor.ts), and a day whose entries disagree with an
 * anchor is reported (anchorFinding).
 */
import { createHash } from 'node:crypto';
import type { AuditEntry } from '../ports/operators';

export const GENESIS = '0'.repeat(64);
/**
 * How far back a day's first entry looks for the previous day with entries (one query per empty
 * day); beyond it the day starts a new chain, anchored like any other.
 */
export const LINK_LOOKBACK_DAYS = 92;

/** JSON with object keys sorted at every depth: one text per value, whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** What an entry's hash covers: everything but the hash itself. */
export function entryHash(entry: Omit<AuditEntry, 'hash'> & { hash?: string }): string {
  const { hash: _hash, ...content } = entry;
  return createHash('sha256').update(canonicalJson(content)).digest('hex');
}

export type ChainBreak = {
  readonly seq: number;
  readonly id?: string;
  readonly problem: 'hash' | 'link' | 'gap' | 'unchained' | 'day-link';
  readonly expected: string;
  readonly found: string;
};

/** The first break of one day's chain, entries in any order; undefined when it is whole. */
export function firstBreak(entries: readonly AuditEntry[]): ChainBreak | undefined {
  const chained = [...entries].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
  let previous = GENESIS;
  for (const [i, e] of chained.entries()) {
    const expectedSeq = i + 1;
    if (e.seq === undefined || e.prevHash === undefined || e.hash === undefined) return { seq: expectedSeq, id: e.id, problem: 'unchained', expected: 'seq, prevHash and hash', found: 'missing' };
    if (e.seq !== expectedSeq) return { seq: expectedSeq, problem: 'gap', expected: `entry ${expectedSeq}`, found: `entry ${e.seq}` };
    // The first entry may link to the previous day (checked against that day by dayLinkBreak).
    if (i === 0 && e.prevDay !== undefined) previous = e.prevHash;
    if (i > 0 && (e.prevDay !== undefined || e.prevSeq !== undefined)) return { seq: e.seq, id: e.id, problem: 'link', expected: 'no link to another day', found: `${e.prevDay} #${e.prevSeq}` };
    if (e.prevHash !== previous) return { seq: e.seq, id: e.id, problem: 'link', expected: previous, found: e.prevHash };
    const recomputed = entryHash(e);
    if (recomputed !== e.hash) return { seq: e.seq, id: e.id, problem: 'hash', expected: recomputed, found: e.hash };
    previous = e.hash;
  }
  return undefined;
}

/** Sorted by sequence: the day's chain as appended. */
export const chainOrder = (entries: readonly AuditEntry[]): AuditEntry[] => [...entries].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));

/**
 * Whether a day's first entry links to what the previous day really holds: entry `prevSeq` of
 * `prevDay`, with the hash `prevHash`. A rewritten earlier day breaks the link of the day after it.
 */
export function dayLinkBreak(first: AuditEntry | undefined, previousDay: readonly AuditEntry[]): ChainBreak | undefined {
  if (!first || first.prevDay === undefined) return undefined;
  const linked = previousDay.find((e) => e.seq === first.prevSeq);
  if (linked?.hash === first.prevHash) return undefined;
  return { seq: first.seq ?? 1, id: first.id, problem: 'day-link', expected: `${first.prevDay} entry ${first.prevSeq} with hash ${first.prevHash}`, found: linked ? `hash ${linked.hash}` : 'no such entry' };
}

/**
 * A day's head as exported to the anchor store: a checkpoint while the day is open (the head at
 * that moment), and once the day is closed its final head (`closed`; `seq` 0 and no hash for a day
 * without entries, so a day cannot be filled in afterwards either).
 */
export interface AuditAnchor {
  readonly day: string;
  readonly seq: number;
  readonly hash: string | null;
  readonly closed: boolean;
  /** When it was exported. */
  readonly at: string;
}

/**
 * - matches: every anchor of the day agrees with its entries;
 * - differs: one does not (a rewritten day, or a late entry after the day was closed);
 * - missing: the day is closed, anchoring had begun, and no closed anchor exists (the export failed);
 * - pending: the day is not closed yet (its checkpoints, if any, are still checked);
 * - unanchored: a day before the first anchor ever exported (written before anchoring began).
 */
export type AnchorStatus = 'matches' | 'differs' | 'missing' | 'pending' | 'unanchored';

export interface AnchorFinding {
  readonly status: AnchorStatus;
  readonly anchors: number;
  readonly problem?: string;
}

/**
 * Checks a day's chain (in chain order) against its anchors. Anchors are write-once, so two that
 * disagree about one slot mean someone wrote a second version: also a difference.
 */
export function anchorFinding(chain: readonly AuditEntry[], anchors: readonly AuditAnchor[], day: { readonly name: string; readonly closed: boolean; readonly beforeAnchoring: boolean }): AnchorFinding {
  const bySeq = new Map(chain.map((e) => [e.seq, e]));
  for (const a of anchors) {
    if (a.seq === 0) {
      if (chain.length) return { status: 'differs', anchors: anchors.length, problem: `the anchor of ${a.day} says it had no entries; the table holds ${chain.length}` };
      continue;
    }
    const entry = bySeq.get(a.seq);
    if (!entry) return { status: 'differs', anchors: anchors.length, problem: `the anchor of ${a.day} names entry ${a.seq}; the table has no such entry` };
    if (entry.hash !== a.hash) return { status: 'differs', anchors: anchors.length, problem: `entry ${a.seq} of ${a.day}: anchored hash ${a.hash}, the table's ${entry.hash}` };
  }
  const closedAnchors = anchors.filter((a) => a.closed);
  for (const c of closedAnchors) {
    if (c.seq !== chain.length) return { status: 'differs', anchors: anchors.length, problem: `${c.day} was closed with ${c.seq} entries; the table holds ${chain.length}` };
  }
  if (closedAnchors.length) return { status: 'matches', anchors: anchors.length };
  if (!day.closed) return { status: 'pending', anchors: anchors.length };
  if (day.beforeAnchoring) return { status: 'unanchored', anchors: anchors.length };
  return { status: 'missing', anchors: anchors.length, problem: `${anchors.length ? 'only checkpoints of' : 'no anchor of'} ${day.name}: the export job has not closed it` };
}
