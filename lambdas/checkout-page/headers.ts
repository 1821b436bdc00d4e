import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Payment } from '../domain/payment';
import type { Merchant } from '../ports/merchants';

const origin = (url: string | undefined): string[] => {
  if (!url) return [];
  try {
    return [new URL(url).origin];
  } catch {
    return [];
  }
};

/**
 * The page's Content-Security-Policy: nothing but its own nonce'd style and script; forms may only
 * go to us and (through our redirects) to the merchant's return URLs; framing only by the origins
 * the merchant configured; fetches only by the processing page, to us.
 */
export function contentSecurityPolicy(
  nonce: string,
  payment?: Payment,
  merchant?: Merchant,
  options: { readonly polls?: boolean; readonly wallets?: { readonly script: readonly string[]; readonly connect: readonly string[]; readonly frame: readonly string[]; readonly img: readonly string[] } } = {},
): string {
  const c = payment?.checkout;
  const formTargets = new Set(["'self'", ...origin(c?.successUrl), ...origin(c?.cancelUrl), ...origin(c?.errorUrl), ...origin(c?.expiryUrl)]);
  const images = new Set(["'self'", 'data:', ...origin(merchant?.branding?.logoUrl), ...(options.wallets?.img ?? [])]);
  // With a wallet on: its script's origins (nonce'd still), what it calls and frames, and our own
  // Apple Pay merchant validation; nothing of a wallet that is off.
  const w = options.wallets;
  const connect = new Set([...(options.polls ? ["'self'"] : []), ...(w?.connect ?? [])]);
  const ancestors = merchant?.frameAncestors?.length ? merchant.frameAncestors.join(' ') : "'none'";
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'${w?.script.length ? ` ${w.script.join(' ')}` : ''}`,
    `style-src 'nonce-${nonce}'`,
    `img-src ${[...images].join(' ')}`,
    `form-action ${[...formTargets].join(' ')}`,
    `frame-ancestors ${ancestors}`,
    "base-uri 'none'",
    // Only the processing page fetches (its own status, on this origin), and a page with wallets on.
    `connect-src ${connect.size ? [...connect].join(' ') : "'none'"}`,
    ...(w?.frame.length ? [`frame-src ${w.frame.join(' ')}`] : []),
  ].join('; ');
}

/** `wallets`: the page offers Apple Pay or Google Pay, whose APIs need the Payment Request feature on this origin. */
export function htmlResponse(statusCode: number, html: string, csp: string, framed: boolean, wallets = false): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': csp,
      'permissions-policy': `camera=(), microphone=(), geolocation=(), payment=${wallets ? '(self)' : '()'}, usb=()`,
      ...(framed ? {} : { 'x-frame-options': 'DENY' }),
    },
    body: html,
  };
}

export const newNonce = (): string => randomBytes(16).toString('base64');

