/**
 * A settled payment can be voided on the day of the payment, before 21:00, at UTC+3 (a fixed
 * offset, no daylight saving). From 21:00 to 24:00 no void is accepted; the next day neither.
 */
export const VOID_ZONE_OFFSET_MINUTES = 180;
export const VOID_CUTOFF_HOUR = 21;

/** When the void window of a payment settled at `paidAt` closes; undefined if it never opens. */
export function voidWindowEndsAt(paidAt: Date): Date | undefined {
  const local = new Date(paidAt.getTime() + VOID_ZONE_OFFSET_MINUTES * 60_000);
  const cutoffLocal = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate(), VOID_CUTOFF_HOUR);
  const cutoff = new Date(cutoffLocal - VOID_ZONE_OFFSET_MINUTES * 60_000);
  return paidAt.getTime() < cutoff.getTime() ? cutoff : undefined;
}

export const canVoidAt = (voidableUntil: string | undefined, now: Date): boolean =>
  voidableUntil !== undefined && now.getTime() < Date.parse(voidableUntil);

export const VOID_WINDOW_REASON = 'Void is possible only on the day of the payment before 21:00 (UTC+3).';

/**
 * A void gives the whole amount back; after a refund it would give the refunded part back twice.
 * A payment with any amount refunded (or being refunded) is therefore not voided.
 */
export const VOID_REFUNDED_REASON = 'A payment with refunds cannot be voided.';

/** Why a settled payment cannot be voided at `now`, or undefined when it can. */
export function voidBlockedReason(payment: { readonly voidableUntil?: string; readonly refundedMinor?: number; readonly refundHeldMinor?: number }, now: Date): string | undefined {
  if (!canVoidAt(payment.voidableUntil, now)) return VOID_WINDOW_REASON;
  if ((payment.refundHeldMinor ?? 0) > 0 || (payment.refundedMinor ?? 0) > 0) return VOID_REFUNDED_REASON;
  return undefined;
}
