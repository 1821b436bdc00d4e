/**
 * How long the whole merchant validation call may take, from connecting to the last byte of Apple's
 * answer. Apple answers in about a second; the customer's sheet waits on this, and so does the pay
 * route's function, whose time is the acquirer's authorization plus OWN_WORK_MS (lib/time-budget.ts,
 * test/unit/time-budget.test.ts): a later answer is a failure the page shows, not a function timed out.
 */
export const APPLE_PAY_VALIDATION_DEADLINE_MS = 6_000;

/**
 * Apple Pay merchant validation (docs/wallets.md): the page's ApplePaySession hands us a validation
 * URL; we call it with the merchant identity certificate and return Apple's merchant session. The
 * URL comes from the browser, so it is trusted only on one of the hosts Apple documents for it
 * ("Setting up your server", Apple Pay on the Web): anything else would let a page make our servers
 * present the certificate to any host.
 */
export const APPLE_PAY_VALIDATION_HOSTS: readonly string[] = [
  'apple-pay-gateway.apple.com',
  'cn-apple-pay-gateway.apple.com',
  ...[1, 2, 3, 4, 5, 6].map((n) => `apple-pay-gateway-nc-pod${n}.apple.com`),
  ...[1, 2, 3, 4, 5].map((n) => `apple-pay-gateway-pr-pod${n}.apple.com`),
  ...[1, 2, 3].map((n) => `cn-apple-pay-gateway-sh-pod${n}.apple.com`),
  ...[1, 2, 3].map((n) => `cn-apple-pay-gateway-tj-pod${n}.apple.com`),
  // Apple's sandbox (test cards on a sandbox tester's device).
  'apple-pay-gateway-cert.apple.com',
  'cn-apple-pay-gateway-cert.apple.com',
];

/** The longest validation URL taken (Apple's are about 70 characters). */
const MAX_URL_LENGTH = 512;

/** The validation URL when it is one of Apple's (https, an allow-listed host, the default port, no credentials); else undefined. */
export function appleValidationUrl(text: unknown): URL | undefined {
  if (typeof text !== 'string' || text.length > MAX_URL_LENGTH) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' || url.port !== '' || url.username || url.password) return undefined;
  return APPLE_PAY_VALIDATION_HOSTS.includes(url.hostname) ? url : undefined;
}

/** What we send Apple's validation URL (Apple Pay JS "Requesting an Apple Pay payment session"). */
export interface MerchantValidationRequest {
  readonly merchantIdentifier: string;
  /** Shown on the payment sheet; Apple takes at most 64 characters. */
  readonly displayName: string;
  readonly initiative: 'web';
  /** The page's host name, a domain verified for the merchant identifier. */
  readonly initiativeContext: string;
}

export const merchantValidationRequest = (merchantIdentifier: string, displayName: string, pageHost: string): MerchantValidationRequest => ({
  merchantIdentifier,
  displayName: displayName.slice(0, 64),
  initiative: 'web',
  initiativeContext: pageHost,
});

/** The Apple Pay merchant identity certificate and its private key (PEM), from Secrets Manager. */
export interface MerchantIdentity {
  readonly certificate: string;
  readonly privateKey: string;
}
