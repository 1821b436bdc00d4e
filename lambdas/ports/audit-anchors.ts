import type { AuditAnchor } from '../domain/audit-chain';

/**
 * Where the audit chain's heads are exported: storage that keeps every anchor as first written
 * (S3 with Object Lock in the cloud, files in the data directory locally). Writes are write-once.
 */
export interface AuditAnchorStore {
  /** Writes the anchor unless one already exists under its name (a day's checkpoint at a seq, or its close): 'exists' then. */
  write(anchor: AuditAnchor): Promise<'written' | 'exists'>;
  /** Every anchor of the day, every version of each where the store keeps versions. */
  ofDay(day: string): Promise<AuditAnchor[]>;
  /** The earliest day with an anchor: days before it were written before anchoring began. */
  firstDay(): Promise<string | undefined>;
}

/** The object name of an anchor: one per checkpoint (by seq) and one close per day; days sort by name. */
export const anchorName = (anchor: Pick<AuditAnchor, 'day' | 'seq' | 'closed'>): string =>
  `${anchor.day}/${anchor.closed ? 'closed' : `seq-${String(anchor.seq).padStart(10, '0')}`}.json`;

/** An anchor read back: the fields it must have, or an error naming the object. */
export function parseAnchor(text: string, name: string): AuditAnchor {
  const value = JSON.parse(text) as Partial<AuditAnchor>;
  const ok =
    typeof value.day === 'string' &&
    /^\d{4}-\d{2}-\d{2}$/.test(value.day) &&
    Number.isInteger(value.seq) &&
    (value.hash === null || (typeof value.hash === 'string' && /^[0-9a-f]{64}$/.test(value.hash))) &&
    typeof value.closed === 'boolean' &&
    typeof value.at === 'string';
  if (!ok) throw new Error(`audit anchor ${name} is not an anchor`);
  return value as AuditAnchor;
}
