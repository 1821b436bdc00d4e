import { formFields, pageEndpoint } from '../middleware/page-endpoint';
import { routeDeps } from '../wiring/acquirer';
import { applePayDeps } from '../wiring/apple-pay';
import { ApiError } from '../domain/errors';
import { jsonResponse } from '../middleware/error-envelope';
import { validateApplePayMerchant } from '../use-cases/apple-pay';
import { publicBaseUrl } from '../middleware/base-url';
import { clientAddress } from '../middleware/client-address';
import { respond } from '../checkout-page/respond';
import { closeLink, openLink, pay, payWithWallet } from '../use-cases/checkout';
import type { BrowserInfo } from '../ports/acquirer';
import { pageProviderOf } from '../checkout-page/provider';
import { pageWalletsOf } from '../checkout-page/wallets';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

const int = (v: string | null, min: number, max: number): number | undefined => {
  const n = Number(v);
  return v && Number.isInteger(n) && n >= min && n <= max ? n : undefined;
};

/** The browser data 3-D Secure 2 asks for, from the page's hidden fields and the request headers. */
function browserInfo(form: URLSearchParams, headers: Record<string, string | undefined>, ip: string | undefined): BrowserInfo {
  return {
    language: form.get('browser_language')?.slice(0, 16) || headers['accept-language']?.split(',')[0]?.slice(0, 16),
    screenWidth: int(form.get('browser_screen_width'), 1, 100_000),
    screenHeight: int(form.get('browser_screen_height'), 1, 100_000),
    colorDepth: int(form.get('browser_color_depth'), 1, 64),
    timeZoneOffsetMinutes: int(form.get('browser_tz_offset'), -900, 900),
    javaEnabled: form.get('browser_java') === 'true',
    userAgent: headers['user-agent']?.slice(0, 512),
    acceptHeader: headers.accept?.slice(0, 256),
    ip,
  };
}

async function applePayMerchantSession(validate: () => Promise<unknown>): Promise<APIGatewayProxyStructuredResultV2> {
  try {
    return jsonResponse(200, await validate());
  } catch (e) {
    if (e instanceof ApiError) return jsonResponse(e.httpStatus, e.toEnvelope());
    throw e;
  }
}

/**
 * POST /auth/{token}: the customer pays (the card form, or a wallet's token: `wallet`), closes the
 * page (`close=1`), or the Apple Pay sheet asks for its merchant session (`applepay_validation_url`).
 */
export const handler = pageEndpoint(async (event, deps) => {
  const token = event.pathParameters?.token ?? '';
  const ctx = { secrets: deps.secrets, action: `/auth/${encodeURIComponent(token)}`, sandbox: deps.config.ACQUIRER === 'sandbox', acceptLanguage: event.headers?.['accept-language'], now: deps.clock.now(), provider: pageProviderOf(deps.config), wallets: { stage: pageWalletsOf(deps.config), accounts: deps.accountReader } };
  const form = formFields(event);
  // A body we cannot read is answered with the page as it stands: the card data is never echoed.
  if (!form) return respond(await openLink(deps, token), ctx);
  if (form.get('close') === '1') return respond(await closeLink(deps, token), ctx);
  // The page's Apple Pay sheet asks for its merchant session (JSON in the error envelope's shape on refusal).
  const validationUrl = form.get('applepay_validation_url');
  if (validationUrl !== null) {
    return applePayMerchantSession(() => validateApplePayMerchant(deps, token, validationUrl, { host: new URL(publicBaseUrl(event, deps.config.PUBLIC_BASE_URL)).hostname, stage: ctx.wallets.stage }));
  }
  const payContext = { baseUrl: publicBaseUrl(event, deps.config.PUBLIC_BASE_URL), browser: browserInfo(form, event.headers ?? {}, clientAddress(event, deps.config)) };
  // A wallet's token (the page's wallet buttons, checkout-page/wallets.ts): the same link, the same result flow.
  const wallet = form.get('wallet');
  if (wallet !== null) {
    const optional = (name: string) => form.get(name) || undefined;
    const walletForm = { wallet, paymentToken: form.get('payment_token') ?? '', network: form.get('network') ?? '', last4: form.get('last4') ?? '', authMethod: optional('auth_method'), email: optional('email'), country: optional('country') };
    return respond(await payWithWallet(deps, token, walletForm, { ...payContext, wallets: ctx.wallets.stage }), ctx);
  }
  const result = await pay(
    deps,
    token,
    {
      method: form.get('method') ?? undefined,
      savedCard: form.get('saved_card') ?? undefined,
      number: form.get('card_number') ?? '',
      expiry: form.get('card_expiry') ?? '',
      cvv: form.get('card_cvv') ?? '',
      holder: form.get('card_holder') ?? '',
      email: form.get('email') ?? undefined,
      country: form.get('country') ?? undefined,
    },
    payContext,
  );
  return respond(result, ctx);
}, () => ({ ...routeDeps(), ...applePayDeps() }));
