import type { AuditEntry } from '../../ports/operators';
import { csvLine } from './payments-csv';

/** The columns of an audit export, in order: the entry as stored, its chain fields last. */
export const AUDIT_EXPORT_COLUMNS = ['at', 'actor', 'actor_role', 'action', 'target_kind', 'target', 'outcome', 'detail', 'before', 'after', 'id', 'seq', 'prev_hash', 'hash'] as const;

const json = (v: Record<string, unknown> | undefined): string => (v === undefined ? '' : JSON.stringify(v));

/**
 * One part of an audit export (RFC 4180, CRLF): the first starts with a byte-order mark and the
 * header row, so the parts joined are one file. Cells a spreadsheet would run as a formula are
 * defused as in the payments export (csvLine): actors, targets and details come from outside.
 * `seq`, `prev_hash` and `hash` let the file be checked against the chain (`verify-audit`).
 */
export function auditCsvPart(entries: readonly AuditEntry[], first: boolean): string {
  const head = first ? `\uFEFF${csvLine([...AUDIT_EXPORT_COLUMNS])}` : '';
  return (
    head +
    entries
      .map((e) =>
        csvLine([e.at, e.actor, e.actorRole ?? '', e.action, e.targetKind, e.target, e.outcome, e.detail ?? '', json(e.before), json(e.after), e.id, e.seq === undefined ? '' : String(e.seq), e.prevHash ?? '', e.hash ?? '']),
      )
      .join('')
  );
}
