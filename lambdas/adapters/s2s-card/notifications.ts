import { hashMatches, transactionHash } from './hash';
import { canonicalKey, paymentIdOfKey, type S2SEntry, type S2SRecords } from './records';
import { approvedOutcome, authorizationStatus, minorOfWireAmount, reasonOf } from './transformers';
import type { AcquirerOutcome } from '../../ports/acquirer';

/** The path the gateway account's Notification URL must name (under PUBLIC_BASE_URL). */
export const NOTIFY_PATH = '/acquirer/s2s-card/notify';

export type NotificationResult =
  | { readonly answer: 'OK'; readonly applied: boolean }
  | { readonly answer: 'ERROR'; readonly why: 'unknown-order' | 'bad-hash' | 'malformed' };

/**
 * A gateway callback (form fields): verified with Formula 2 from the trans_id it carries and the
 * payer e-mail and card digits recorded for its order, then recorded on the operation it answers,
 * forward only (a repeated or late callback changes nothing). Only final results are recorded;
 * WAITING/REDIRECT ones are acknowledged. The payment itself is settled from these records by the
 * page's return and by the reconciler, never inside the gateway's request (it blocks a URL that is
 * slow to answer).
 */
export async function acceptNotification(records: S2SRecords, password: string, fields: Readonly<Record<string, string>>): Promise<NotificationResult> {
  const orderId = fields.order_id;
  const transId = fields.trans_id;
  const action = (fields.action ?? '').toUpperCase();
  if (!orderId || !transId || !action) return { answer: 'ERROR', why: 'malformed' };
  const paymentId = paymentIdOfKey(canonicalKey(orderId));
  const entries = await records.entries(paymentId);
  const authorization = entries[canonicalKey(orderId)];
  if (!authorization || authorization.operation !== 'authorization') return { answer: 'ERROR', why: 'unknown-order' };
  if (!hashMatches(fields.hash, transactionHash(password, authorization.party, transId))) return { answer: 'ERROR', why: 'bad-hash' };

  const result = (fields.result ?? '').toUpperCase();
  const final = result === 'SUCCESS' || result === 'DECLINED';
  if (!final) return { answer: 'OK', applied: false };

  if (action === 'SALE' || action === 'RECURRING_SALE') {
    const read = authorizationStatus(fields.status, authorization.capture ?? true);
    const outcome: AcquirerOutcome | undefined =
      result === 'DECLINED' || read === 'declined'
        ? { kind: 'declined', acquirerRef: transId, reason: reasonOf(fields) }
        : read === 'approved'
          ? approvedOutcome(fields, transId, authorization.storeCredential ?? false, authorization.party.email)
          : undefined;
    if (!outcome) return { answer: 'OK', applied: false };
    const after = await records.advance(paymentId, authorization.key, { state: 'answered', outcome, transId });
    return { answer: 'OK', applied: after?.outcome === outcome || JSON.stringify(after?.outcome) === JSON.stringify(outcome) };
  }

  const kinds: Readonly<Record<string, readonly S2SEntry['operation'][]>> = { CAPTURE: ['capture'], VOID: ['void'], CREDITVOID: ['refund', 'reversal'] };
  const wanted = kinds[action];
  if (!wanted) return { answer: 'OK', applied: false };
  // The callback names the payment, not the follow-up: the oldest open one of that kind (and, for
  // CREDITVOID, of that amount) is the one answered. One refund in flight per payment keeps this exact.
  const amount = minorOfWireAmount(fields.amount, authorization.currency);
  const open = Object.values(entries)
    .filter((e) => wanted.includes(e.operation) && e.state === 'sent' && e.transId === transId)
    .filter((e) => action !== 'CREDITVOID' || amount === undefined || e.operation === 'reversal' || e.amountMinor === amount)
    .sort((a, b) => a.at.localeCompare(b.at));
  const target = open[0];
  if (!target) return { answer: 'OK', applied: false };
  const outcome: AcquirerOutcome = result === 'SUCCESS' ? { kind: 'approved', acquirerRef: transId } : { kind: 'declined', acquirerRef: transId, reason: reasonOf(fields) };
  await records.advance(paymentId, target.key, { state: 'answered', outcome });
  return { answer: 'OK', applied: true };
}
