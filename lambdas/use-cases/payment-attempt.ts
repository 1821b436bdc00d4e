import { logger } from '../observability/logger';
import type { Payment } from '../domain/payment';
import type { Acquirer, AcquirerOutcome, AuthorizeRequest } from '../ports/acquirer';
import { DEFAULT_SETTINGS, type Merchant, type MerchantDirectory } from '../ports/merchants';

/**
 * What every attempt to pay shares, whoever starts it (the hosted page, a recurring charge, a
 * retry) and whoever finishes it (the reconciler, the capture job): the merchant's settings it is
 * read with, and the acquirer's authorization, where no answer is an unknown outcome.
 */

/** The merchant's settings; the defaults when the merchant has none stored. */
export async function merchantOf(deps: { readonly merchants: MerchantDirectory }, payment: Payment): Promise<Merchant> {
  return (await deps.merchants.find(payment.merchantKey)) ?? {
    ...DEFAULT_SETTINGS,
    merchantKey: payment.merchantKey,
    createdAt: payment.createdAt,
    updatedAt: payment.createdAt,
  };
}

/**
 * The acquirer's answer to an authorization; a call that failed without one (timeout, network) is
 * an unknown outcome: the attempt stays in flight and the reconciler asks by its key.
 */
export async function authorizeOrUnknown(acquirer: Acquirer, request: AuthorizeRequest): Promise<AcquirerOutcome> {
  try {
    return await acquirer.authorize(request);
  } catch (e) {
    // Logged (redacted) for operators; the attempt stays in flight for the reconciler.
    logger.warn('acquirer call failed', { operation: 'authorize', paymentId: request.paymentId, error: e as Error });
    return { kind: 'unknown', acquirerRef: '', reason: 'The acquirer did not answer.' };
  }
}

