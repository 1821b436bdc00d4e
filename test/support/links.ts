import { decodeLinkToken } from '../../lambdas/domain/checkout-link';

/** The payment id inside a redirect_url's link token. */
export function paymentIdOf(redirectUrl: string): string {
  const token = new URL(redirectUrl).pathname.split('/').pop() ?? '';
  const decoded = decodeLinkToken(token);
  if (!decoded) throw new Error(`not a checkout link: ${redirectUrl}`);
  return decoded.paymentId;
}
