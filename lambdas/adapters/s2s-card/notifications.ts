import { hashMatches, transactionHash } from './hash';
import { canonicalKey, paymentIdOfKey, type DisputeHint, type S2SEntry, type S2SRecords } from './records';
import { minorOfWireAmount } from './transformers';
import type { S2SCardAcquirer } from './s2s-card-acquirer';

/** The path the gateway account's Notification URL must name (under PUBLIC_BASE_URL). */
export const NOTIFY_PATH = '/acquirer/s2s-card/notify';

export type NotificationResult =
  /** `dispute`: a CHARGEBACK callback, kept as a hint; the payment's chargebacks are read from the gateway next. */
  | { readonly answer: 'OK'; readonly paymentId: string; readonly changed: boolean; readonly dispute?: boolean }
  | { readonly answer: 'ERROR'; readonly why: 'unknown-order' | 'bad-hash' | 'malformed' | 'unconfirmed' };

const FOLLOW_UP_ACTIONS = new Set(['CAPTURE', 'VOID', 'CREDITVOID']);

/**
 * A gateway callback is a hint, never the truth. Its hash (Formula 2) signs only the trans_id with
 * the payer's e-mail and card digits, not `result`, `status`, `amount` or `order_id`, so anyone who
 * holds one genuine callback could rewrite those. It is therefore only checked to belong to its
 * order (hash with the order's recorded payer, trans_id equal to the order's at the gateway), and
 * then the payment is read again from the gateway itself: the authorization by our order id
 * (GET_TRANS_STATUS_BY_ORDER) while it has no final answer, the follow-ups from the payment's history
 * (GET_TRANS_DETAILS). Whatever changes is what the gateway reports; the callback's own fields change
 * nothing. A callback whose trans_id the gateway does not confirm is refused (ERROR) and logged by the
 * caller. Every accepted callback causes a reading, so one that changes nothing is never silence.
 */
export async function acceptNotification(connector: S2SCardAcquirer, records: S2SRecords, fields: Readonly<Record<string, string>>, now: Date = new Date()): Promise<NotificationResult> {
  const orderId = fields.order_id;
  const transId = fields.trans_id;
  const action = (fields.action ?? '').toUpperCase();
  if (!orderId || !transId || !action) return { answer: 'ERROR', why: 'malformed' };
  const paymentId = paymentIdOfKey(canonicalKey(orderId));
  const entries = await records.entries(paymentId);
  const authorization = entries[canonicalKey(orderId)];
  if (!authorization || authorization.operation !== 'authorization') return { answer: 'ERROR', why: 'unknown-order' };
  // Signed with the password of the account the order went through (the merchant's own, or the
  // stage's); a mismatch reads the password again past the cache once (it may have just been rotated).
  const signedBy = async (fresh: boolean) => hashMatches(fields.hash, transactionHash(await connector.passwordOf(authorization, fresh), authorization.party, transId));
  if (!(await signedBy(false)) && !(await signedBy(true))) return { answer: 'ERROR', why: 'bad-hash' };

  // The trans_id must be this order's: the one we recorded, or (not recorded yet, or changed by the
  // gateway's cascading) the one the gateway reports for our order id.
  const recorded = authorization.transId ?? authorization.outcome?.acquirerRef;
  if (recorded !== transId && (await connector.transIdOfOrder(authorization)) !== transId) return { answer: 'ERROR', why: 'unconfirmed' };

  let current = entries;
  if (authorization.state !== 'answered') {
    await connector.rereadAuthorization(paymentId, authorization);
    current = await records.entries(paymentId);
  }
  if (action === 'CHARGEBACK') {
    // News of a dispute, kept; what it was is read from the gateway by the reconciler.
    await records.noteDispute(paymentId, disputeHintOf(fields, authorization.currency, now));
    return { answer: 'OK', paymentId, changed: true, dispute: true };
  }
  const settled = current[authorization.key];
  const approvedRef = settled?.outcome?.kind === 'approved' ? settled.outcome.acquirerRef : undefined;
  const openFollowUps = Object.values(current).some((e) => e.operation !== 'authorization' && e.state === 'sent');
  if (approvedRef && (FOLLOW_UP_ACTIONS.has(action) || openFollowUps)) {
    await connector.settleFollowUps(paymentId, approvedRef, authorization.party, authorization.currency, authorization.account);
    current = await records.entries(paymentId);
  }
  return { answer: 'OK', paymentId, changed: fingerprint(current) !== fingerprint(entries) };
}

const fingerprint = (entries: Record<string, S2SEntry>): string =>
  JSON.stringify(
    Object.values(entries)
      .map((e) => [e.key, e.state, e.outcome?.kind ?? ''])
      .sort(),
  );

/** A scheme's reason code (`4837`, `10.4`, `UA02`) or a date as the gateway writes it; anything else is dropped. */
const REASON_CODE = /^[A-Za-z0-9][A-Za-z0-9 .\-]{0,31}$/;
const GATEWAY_DATE = /^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}(:\d{2})?)?$/;

/** What a CHARGEBACK callback says of its dispute, each field checked for its shape (none is signed). */
export function disputeHintOf(fields: Readonly<Record<string, string>>, currency: string, now: Date): DisputeHint {
  const amountMinor = minorOfWireAmount(fields.amount, currency);
  const reasonCode = fields.reason_code?.trim();
  const date = (raw: string | undefined) => (raw && GATEWAY_DATE.test(raw.trim()) ? raw.trim() : undefined);
  const chargebackDate = date(fields.chargeback_date);
  const bankDate = date(fields.bank_date);
  return {
    at: now.toISOString(),
    ...(amountMinor !== undefined && amountMinor > 0 ? { amountMinor } : {}),
    ...(reasonCode && REASON_CODE.test(reasonCode) ? { reasonCode } : {}),
    ...(chargebackDate ? { chargebackDate } : {}),
    ...(bankDate ? { bankDate } : {}),
  };
}
