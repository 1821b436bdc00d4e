/**
 * The platform's cascading rule (protocol.md §7): a checkout link reports only its final attempt.
 * A declined attempt after which the customer may still try again on the same link is *held*: no
 * callback is sent for it and the status endpoint reads `prepare`, until the outcome is final —
 * the declines the merchant allows are used up, the customer closes the page, or the link expires.
 * Then the held decline's callback goes out (`sale/fail/decline` with its reason) and the status
 * reads `decline`. A later attempt on the link supersedes it: its callback is never sent.
 */
import type { LinkClosure, Payment, Transaction } from './payment';

/** Transaction types of a customer's attempt on a link (the step to a challenge or bank included). */
const ATTEMPT_TYPES: readonly Transaction['type'][] = ['sale', '3ds', 'redirect'];

const linkExpired = (p: Payment, now: Date): boolean => p.checkout !== undefined && Date.parse(p.checkout.expiresAt) <= now.getTime();

/** A declined link payment on which the customer may still try again: its decline is not final. */
export function awaitsAnotherAttempt(p: Payment, now: Date): boolean {
  return p.checkout !== undefined && p.status === 'decline' && p.linkClosed === undefined && !linkExpired(p, now);
}

/** When a declined link that is still open closes by expiry (the reconciler then reports the decline). */
export function closesByExpiryAt(p: Payment): Date | undefined {
  return p.checkout !== undefined && p.status === 'decline' && p.linkClosed === undefined ? new Date(p.checkout.expiresAt) : undefined;
}

/**
 * How a decline recorded now on a payment ends: `held` when the customer may still try again on its
 * link; otherwise the link's closure (none for a merchant-initiated payment, which has no link).
 */
export function declineEffect(
  p: Payment,
  declinesAfter: number,
  maxDeclines: number,
  now: Date,
): { readonly held: true } | { readonly held: false; readonly linkClosed?: LinkClosure } {
  if (!p.checkout) return { held: false };
  const at = now.toISOString();
  if (p.linkClosed) return { held: false };
  if (declinesAfter >= maxDeclines) return { held: false, linkClosed: { at, why: 'declines' } };
  if (linkExpired(p, now)) return { held: false, linkClosed: { at, why: 'expired' } };
  return { held: true };
}

/**
 * The held decline a closure makes final: the position of the last attempt's transaction, when
 * that transaction is a held decline. Undefined when there is none (the link was never declined, or
 * its last decline was already reported).
 */
export function heldDeclineIndex(p: Payment): number | undefined {
  for (let i = p.transactions.length - 1; i >= 0; i--) {
    const tx = p.transactions[i]!;
    if (tx.internal || !ATTEMPT_TYPES.includes(tx.type)) continue;
    return tx.held ? i : undefined;
  }
  return undefined;
}

/** The status a merchant reads: `prepare` while the link takes another attempt after a decline. */
export function reportedStatus(p: Payment, now: Date): { readonly status: Payment['status']; readonly reason?: string } {
  if (awaitsAnotherAttempt(p, now)) return { status: 'prepare' };
  return { status: p.status, ...(p.reason ? { reason: p.reason } : {}) };
}

/**
 * Whether the transaction at `index` gets a callback in its turn (in order). Ledger-only entries
 * never do; a held decline does not — if it turns out final, its closure queues it to be sent.
 */
export function sentInTurn(tx: Transaction): { readonly send: true } | { readonly send: false; readonly why: string } {
  if (tx.internal) return { send: false, why: NOT_SENT.internal };
  if (tx.held) return { send: false, why: NOT_SENT.held };
  return { send: true };
}

export const NOT_SENT = {
  internal: 'Not sent: recorded for the ledger only (its reversal is reported).',
  held: 'Not sent in turn: the customer could still try again on the link. Sent once this decline is final.',
} as const;
