import { appleValidationUrl, merchantValidationRequest } from '../domain/apple-pay';
import { decodeLinkToken, linkSecretMatches } from '../domain/checkout-link';
import { ApiError } from '../domain/errors';
import { hasLink } from '../domain/payment';
import { applePayMerchantIdOf, walletsForPage, type StageWallets } from '../domain/wallet-settings';
import { logger } from '../observability/logger';
import type { ApplePay } from '../ports/apple-pay';
import type { Clock } from '../ports/clock';
import type { MerchantDirectory } from '../ports/merchants';
import type { PaymentStore } from '../ports/payments';
import { merchantOf } from './payment-attempt';

export interface ApplePayDeps {
  readonly store: PaymentStore;
  readonly merchants: MerchantDirectory;
  readonly applePay: ApplePay;
  readonly clock: Clock;
}

/**
 * POST /auth/{token} with `applepay_validation_url`: Apple Pay merchant validation for a link whose page offers
 * Apple Pay. The validation URL comes from the browser: only one on Apple's documented hosts is
 * called (domain/apple-pay.ts), with the merchant identity certificate of the merchant's Apple Pay
 * merchant identifier (its own, else the stage's) over mutual TLS. Apple's merchant session goes
 * back to the page as Apple gave it. Refusals: APPLE_PAY_VALIDATION_REFUSED (nothing sent);
 * Apple's failure or a missing certificate: APPLE_PAY_VALIDATION_FAILED (the card form stays).
 */
export async function validateApplePayMerchant(
  deps: ApplePayDeps,
  token: string,
  validationUrl: unknown,
  page: { readonly host: string; readonly stage: StageWallets },
): Promise<unknown> {
  const decoded = decodeLinkToken(token);
  const payment = decoded ? await deps.store.findPayment(decoded.paymentId) : undefined;
  if (!decoded || !payment || !hasLink(payment) || !linkSecretMatches(decoded.secret, payment.checkout.secretHash)) throw new ApiError('LINK_NOT_FOUND');
  const merchant = await merchantOf(deps, payment);
  const url = appleValidationUrl(validationUrl);
  const open = Date.parse(payment.checkout.expiresAt) > deps.clock.now().getTime() && !payment.paidAt;
  if (!url || !open || !walletsForPage(payment.checkout, merchant, payment.order, page.stage).includes('applepay')) throw new ApiError('APPLE_PAY_VALIDATION_REFUSED');
  const merchantIdentifier = applePayMerchantIdOf(merchant, page.stage)!;
  const identity = await deps.applePay.secrets.identityOf(merchantIdentifier);
  if (!identity) {
    logger.error('no Apple Pay merchant identity certificate stored', { merchantIdentifier });
    throw new ApiError('APPLE_PAY_VALIDATION_FAILED');
  }
  try {
    return await deps.applePay.validation.validate(url, identity, merchantValidationRequest(merchantIdentifier, merchant.name, page.host));
  } catch (e) {
    // The error names Apple's answer or the connection's failure, never the certificate or key.
    logger.warn('Apple Pay merchant validation failed', { merchantIdentifier, host: url.hostname, reason: (e as Error).message });
    throw new ApiError('APPLE_PAY_VALIDATION_FAILED');
  }
}
