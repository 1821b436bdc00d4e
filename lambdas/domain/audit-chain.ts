/**
 * The audit log is tamper-evident: each day's entries form a chain. Entry n carries its sequence
 * number, the hash of entry n-1 (`prevHash`; the first of a day links to GENESIS) and its own hash
 * over that and its canonical content. Changing an entry breaks its hash; removing one leaves a gap
 * in the sequence; reordering breaks the links. Appends never race into a fork: entry n is written
 * with a condition that slot n is free (see adapters/dynamodb/audit-log.ts).
 */
import { createHash } from 'node:crypto';
import type { AuditEntry } from '../ports/operators';

export const GENESIS = '0'.repeat(64);

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
  readonly problem: 'hash' | 'link' | 'gap' | 'unchained';
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
    if (e.prevHash !== previous) return { seq: e.seq, id: e.id, problem: 'link', expected: previous, found: e.prevHash };
    const recomputed = entryHash(e);
    if (recomputed !== e.hash) return { seq: e.seq, id: e.id, problem: 'hash', expected: recomputed, found: e.hash };
    previous = e.hash;
  }
  return undefined;
}
