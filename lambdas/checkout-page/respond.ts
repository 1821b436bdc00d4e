import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Merchant } from '../ports/merchants';
import type { MerchantSecrets } from '../ports/merchants';
import { returnUrl, type CheckoutResult } from '../use-cases/checkout';
import type { LinkPayment, Payment } from '../domain/payment';
import { renderForm, renderNavigation, renderState, type RenderContext } from './render';
import { contentSecurityPolicy, htmlResponse, newNonce } from './headers';
import { pageTexts } from './texts';
import { pollPlan } from './polling';
import type { PageProvider } from './provider';
import { walletSources, walletsOfView, type PageWalletContext } from './wallets';

export { contentSecurityPolicy, htmlResponse, newNonce };

const STATUS_OF: Record<string, number> = { form: 200, paid: 200, action: 200, processing: 202, 'not-found': 404, expired: 410, closed: 410 };

/** Where Close goes: cancel_url, with return parameters once a decline has happened. */
async function closeUrlOf(secrets: MerchantSecrets, payment: LinkPayment, merchant: Merchant): Promise<string | undefined> {
  const cancel = payment.checkout.cancelUrl;
  if (!cancel) return undefined;
  return payment.status === 'decline' ? returnUrl({ secrets }, payment, merchant, cancel) : cancel;
}

/**
 * Where the page's way back to the shop leads: a paid link to the success page (with the return
 * parameters when they are on); a payment whose outcome is open to error_url, the shop's page for
 * that, before cancel_url, which would tell the customer the payment was cancelled.
 */
async function leaveUrlOf(kind: CheckoutResult['kind'], secrets: MerchantSecrets, payment: LinkPayment, merchant: Merchant): Promise<string | undefined> {
  if (kind === 'paid') return returnUrl({ secrets }, payment, merchant, payment.checkout.successUrl);
  if (kind === 'processing' && payment.checkout.errorUrl) return payment.checkout.errorUrl;
  return closeUrlOf(secrets, payment, merchant);
}

/** Turns what the checkout use case decided into the HTTP answer. */
export async function respond(
  result: CheckoutResult,
  ctx: { secrets: MerchantSecrets; action: string; sandbox: boolean; acceptLanguage?: string; now: Date; provider?: PageProvider; wallets?: PageWalletContext },
): Promise<APIGatewayProxyStructuredResultV2> {
  const nonce = newNonce();
  // The session's language, else the browser's, else English (texts/index.ts).
  const texts = pageTexts('payment' in result ? result.payment?.checkout.language : undefined, ctx.acceptLanguage);
  if (result.kind === 'navigate') {
    const target = result.target ?? '_self';
    if (target === '_self' || result.why === 'action') {
      return { statusCode: 303, headers: { location: result.url, 'cache-control': 'no-store' }, body: '' };
    }
    // The page may be inside the merchant's frame (url_target _top or _parent): its framing rules apply.
    const framed = Boolean(result.merchant?.frameAncestors?.length);
    return htmlResponse(200, renderNavigation(result, { nonce, texts, provider: ctx.provider }), contentSecurityPolicy(nonce, undefined, result.merchant), framed);
  }
  const payment = 'payment' in result ? result.payment : undefined;
  const merchant = 'merchant' in result ? result.merchant : undefined;
  const processing = result.kind === 'processing' ? { statusUrl: `${ctx.action}/status`, checkUrl: `${ctx.action}/complete`, plan: pollPlan(result.payment, ctx.now) } : undefined;
  const offered = result.kind === 'form' && ctx.wallets ? await walletsOfView(result, ctx.wallets) : undefined;
  const wallets = offered?.offered ?? [];
  const render: RenderContext = {
    nonce,
    texts,
    action: ctx.action,
    sandbox: ctx.sandbox,
    provider: ctx.provider,
    now: ctx.now,
    closeUrl: payment && merchant ? await leaveUrlOf(result.kind, ctx.secrets, payment, merchant) : undefined,
    ...(processing ? { processing } : {}),
    ...(offered && wallets.length ? { wallets: { offered, stage: ctx.wallets!.stage } } : {}),
  };
  const html = result.kind === 'form' ? renderForm(result, render) : renderState(result, render);
  const status = result.kind === 'form' && result.problems ? 400 : (STATUS_OF[result.kind] ?? 200);
  const csp = contentSecurityPolicy(nonce, payment, merchant, { polls: Boolean(processing), ...(wallets.length ? { wallets: walletSources(wallets) } : {}) });
  return htmlResponse(status, html, csp, Boolean(merchant?.frameAncestors?.length), wallets.length > 0);
}
