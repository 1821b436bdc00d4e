import type { FoundPage } from '../../use-cases/admin/search';
import { listEntry, type PaymentListEntry } from './payment-view';

/** The columns of an export, in order. */
export const EXPORT_COLUMNS = [
  'created_at', 'payment_id', 'merchant_key', 'merchant_name', 'order_number', 'amount', 'currency', 'status', 'reason',
  'captured_amount', 'refunded_amount', 'chargeback_amount', 'card_brand', 'card_mask', 'customer_email', 'updated_at',
  // Added last, so a sheet that reads columns by position keeps working.
  'description', 'customer_name',
] as const;

/**
 * One part of a search's CSV export: its rows, newest first, and the cursor of the next part. The
 * first part starts with a byte-order mark and the header row; the parts concatenated are one RFC
 * 4180 file. Card numbers appear only masked, as stored.
 */
export function csvPart(part: FoundPage, first: boolean): { csv: string; rows: number; cursor?: string } {
  const head = first ? `\uFEFF${csvLine([...EXPORT_COLUMNS])}` : '';
  return {
    csv: head + part.found.map((f) => csvLine(exportRow(listEntry(part.now)(f)))).join(''),
    rows: part.found.length,
    ...(part.cursor ? { cursor: part.cursor } : {}),
  };
}

function exportRow(e: PaymentListEntry): string[] {
  return [
    e.created_at, e.payment_id, e.merchant_key, e.merchant_name ?? '', e.order_number, e.amount, e.currency, e.status, e.reason ?? '',
    e.captured_amount ?? '', e.refunded_amount ?? '', e.chargeback_amount ?? '', e.card?.brand ?? '', e.card?.mask ?? '', e.customer?.email ?? '', e.updated_at,
    e.description, e.customer?.name ?? '',
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
