import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { ApiError, invalidRequest } from '../domain/errors';
import { parseAmount, signedAmountRenderings } from '../domain/money';
import { ORDER_DESCRIPTION_CHARACTERS, ORDER_NUMBER_CHARACTERS, protocolDate, type Payment } from '../domain/payment';
import { RULE, fieldErrorsFrom, text } from '../domain/validation';
import type { Acquirer, AcquirerOutcome } from '../ports/acquirer';
import type { MerchantDirectory } from '../ports/merchants';
import type { RecurringChain } from '../ports/tokens';
import { authorizeOrUnknown, merchantOf } from './payment-attempt';
import { logger } from '../observability/logger';
import { reconcileAt, recordOutcome, type RecordDeps } from './record-outcome';

export const recurringSchema = z.object({
  merchant_key: text({ max: 255 }),
  recurring_init_trans_id: text({ max: 255 }),
  recurring_token: text({ max: 255 }),
  schedule_id: z.optional(text({ max: 255, pattern: /^[A-Za-z0-9_-]+$/ })),
  hash: text({ max: 255 }),
  // The same characters as a session's order (domain/payment.ts): a shop's recurring orders are written like its others.
  order: z.object({
    number: text({ max: 255, pattern: ORDER_NUMBER_CHARACTERS }),
    amount: z.union([z.string(), z.number()], { error: RULE.invalid }),
    description: text({ min: 2, max: 1024, pattern: ORDER_DESCRIPTION_CHARACTERS }),
  }),
  customer: z.optional(z.nullable(z.object({ name: z.optional(z.string()), email: z.optional(z.string()) }))),
});
export type RecurringRequest = z.infer<typeof recurringSchema>;

export function validateRecurring(body: unknown): RecurringRequest {
  const parsed = recurringSchema.safeParse(body);
  if (!parsed.success) throw invalidRequest(fieldErrorsFrom(parsed.error.issues));
  return parsed.data;
}

/** recurring_init_trans_id, recurring_token, order.number, order.amount, order.description (no currency). */
export function recurringHashFields(r: RecurringRequest): string[][] {
  return signedAmountRenderings(r.order.amount).map((a) => [r.recurring_init_trans_id, r.recurring_token, r.order.number, a, r.order.description]);
}

/**
 * The canonical form of a hashed field: the hash is computed over upper-cased fields, so every
 * letter-case variant of a signed request verifies; replay keys are built from this form so that
 * they are all one request.
 */
export const canonicalField = (s: string): string => s.toUpperCase();

export interface RecurringDeps extends RecordDeps {
  readonly acquirer: Acquirer;
  readonly merchants: MerchantDirectory;
}

export interface RecurringResponse {
  status: string;
  reason?: string;
  payment_id: string;
  date: string;
  schedule_id?: string;
  order: { number: string; amount: string; currency: string; description: string };
}

/** Replays wait for the first request's answer this long at most (10 reads, 150 ms apart). */
const REPLAY_POLLS = 10;
const REPLAY_POLL_MS = 150;

/**
 * The idempotency rule of recurring charges: one payment per (merchant, recurring chain, order
 * number). Its id is derived from those three, so a replayed request finds the same payment
 * instead of charging again; a replay with a different amount or description is refused as a
 * duplicate.
 */
export function recurringPaymentId(merchantKey: string, recurringToken: string, orderNumber: string): string {
  const h = createHash('sha256').update(`${merchantKey}\n${recurringToken}\n${canonicalField(orderNumber)}`).digest('hex');
  // Formatted as an RFC 9562 version 8 (custom) UUID.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const fingerprint = (amountMinor: number, description: string, scheduleId: string | undefined) =>
  createHash('sha256').update(`${amountMinor}\n${canonicalField(description)}\n${scheduleId ?? ''}`).digest('hex');

export function recurringResponse(p: Payment): RecurringResponse {
  return {
    status: p.status === 'decline' ? 'declined' : p.status,
    ...(p.reason && p.status === 'decline' ? { reason: p.reason } : {}),
    payment_id: p.paymentId,
    date: protocolDate(p.createdAt),
    ...(p.scheduleId ? { schedule_id: p.scheduleId } : {}),
    order: { number: p.order.number, amount: p.order.amount, currency: p.order.currency, description: p.order.description },
  };
}

async function chainFor(deps: RecurringDeps, merchantKey: string, r: RecurringRequest): Promise<RecurringChain> {
  const chain = await deps.tokens.findRecurringChain(r.recurring_token);
  const matches = chain && chain.merchantKey === merchantKey && (chain.initTransId === r.recurring_init_trans_id || chain.initPaymentId === r.recurring_init_trans_id);
  if (!chain || !matches) throw new ApiError('RECURRING_TOKEN_INVALID');
  return chain;
}

/** POST /api/v1/payment/recurring: charges the card of a recurring chain again. */
export async function chargeRecurring(deps: RecurringDeps, merchantKey: string, r: RecurringRequest): Promise<RecurringResponse> {
  const chain = await chainFor(deps, merchantKey, r);
  const amount = parseAmount(r.order.amount, chain.currency);
  if (typeof amount === 'string') {
    throw invalidRequest([{ path: 'order.amount', message: amount === 'not-positive' ? RULE.positive : amount === 'blank' ? RULE.blank : RULE.invalid }]);
  }
  const paymentId = recurringPaymentId(merchantKey, chain.token, r.order.number);
  const scheduleId = r.schedule_id ?? chain.scheduleId;
  const print = fingerprint(amount.amountMinor, r.order.description, scheduleId);
  const now = deps.clock.now();
  const at = now.toISOString();
  const transId = deps.ids.transId();
  const idempotencyKey = `${paymentId}.1`;
  // Chains made before the IP was kept on them: the first payment still has it.
  const first = chain.customerIp ? undefined : await deps.store.findPayment(chain.initPaymentId);
  const customerIp = chain.customerIp ?? first?.customerIp ?? first?.browser?.ip;
  const payment: Payment = {
    paymentId,
    merchantKey,
    status: 'prepare',
    order: { number: r.order.number, amount: amount.literal, amountMinor: amount.amountMinor, currency: chain.currency, description: r.order.description },
    customer: chain.customer,
    createdAt: at,
    updatedAt: at,
    transactions: [],
    attempt: 1,
    inFlight: { attempt: 1, transId, startedAt: at, idempotencyKey },
    card: chain.card,
    recurringChainToken: chain.token,
    recurringToken: chain.token,
    recurringInitTransId: chain.initTransId,
    requestFingerprint: print,
    ...(customerIp ? { customerIp } : {}),
    ...(scheduleId ? { scheduleId } : {}),
    ...(chain.acquirerAccount ? { acquirerAccount: chain.acquirerAccount } : {}),
  };
  try {
    await deps.store.createPayment(payment, reconcileAt(deps.policy, now));
  } catch (e) {
    if ((e as Error).name !== 'ConditionalCheckFailedException') throw e;
    return replay(deps, paymentId, print);
  }
  const outcome = await authorizeOrUnknown(deps.acquirer, {
    idempotencyKey,
    paymentId,
    amountMinor: amount.amountMinor,
    currency: chain.currency,
    capture: true,
    instrument: { kind: 'stored', storedCredentialRef: chain.storedCredentialRef, summary: chain.card },
    returnUrl: 'https://invalid.example/merchant-initiated',
    storeCredential: false,
    recurring: true,
    attempt: 1,
    ...(payment.acquirerAccount ? { account: payment.acquirerAccount } : {}),
  });
  return recordMerchantInitiated(deps, payment, { attempt: 1, transId, idempotencyKey }, outcome);
}

/** Records the answer of a merchant-initiated attempt (first charge or retry) and answers with it. */
export async function recordMerchantInitiated(
  deps: RecurringDeps,
  payment: Payment,
  ref: { attempt: number; transId: string; idempotencyKey: string },
  outcome: AcquirerOutcome,
): Promise<RecurringResponse> {
  // No answer (or an unexpected customer action): the payment stays in prepare for reconciliation.
  if (outcome.kind === 'unknown' || outcome.kind === 'action') return recurringResponse(payment);
  // The acquirer has answered: from here on a failure of ours must not turn into a 5xx (a merchant
  // retrying would be told "duplicate"); the answer is the acquirer's and the reconciler records it.
  const asAnswered = () => recurringResponse({ ...payment, status: outcome.kind === 'approved' ? 'settled' : 'decline', ...(outcome.kind === 'declined' ? { reason: outcome.reason } : {}) });
  try {
    const merchant = await merchantOf(deps, payment);
    const recorded = await recordOutcome(deps, payment, merchant, ref, outcome, 'recurring');
    if (recorded.kind === 'recorded') return recurringResponse(recorded.payment);
    if (recorded.kind === 'deferred') return asAnswered();
    const current = await deps.store.findPayment(payment.paymentId);
    return recurringResponse(current ?? payment);
  } catch (e) {
    logger.warn('recording an acquirer answer failed; left to reconciliation', { paymentId: payment.paymentId, error: e as Error });
    return asAnswered();
  }
}

async function replay(deps: RecurringDeps, paymentId: string, print: string): Promise<RecurringResponse> {
  for (let i = 0; i < REPLAY_POLLS; i++) {
    const existing = await deps.store.findPayment(paymentId);
    if (!existing) break;
    if (existing.requestFingerprint !== print) throw new ApiError('DUPLICATE_REQUEST');
    if (!existing.inFlight) return recurringResponse(existing);
    await new Promise((resolve) => setTimeout(resolve, REPLAY_POLL_MS));
  }
  const existing = await deps.store.findPayment(paymentId);
  if (!existing) throw new ApiError('DUPLICATE_REQUEST');
  return recurringResponse(existing);
}
