import { pageEndpoint } from '../middleware/page-endpoint';
import { routeDeps } from '../wiring/acquirer';
import { respond } from '../checkout-page/respond';
import { openLink } from '../use-cases/checkout';
import { pageProviderOf } from '../checkout-page/provider';
import { pageWalletsOf } from '../checkout-page/wallets';

/** GET /auth/{token}: the hosted checkout page. */
export const handler = pageEndpoint(async (event, deps) => {
  const token = event.pathParameters?.token ?? '';
  return respond(await openLink(deps, token), { secrets: deps.secrets, action: `/auth/${encodeURIComponent(token)}`, sandbox: deps.config.ACQUIRER === 'sandbox', acceptLanguage: event.headers?.['accept-language'], now: deps.clock.now(), provider: pageProviderOf(deps.config), wallets: { stage: pageWalletsOf(deps.config), accounts: deps.accountReader } });
}, routeDeps);
