import { pageEndpoint } from '../middleware/page-endpoint';
import { routeDeps } from '../wiring/acquirer';
import { respond } from '../checkout-page/respond';
import { completeAction } from '../use-cases/checkout';
import { pageProviderOf } from '../checkout-page/provider';

/** GET /auth/{token}/complete: the customer is back from 3-D Secure or the bank redirect. */
export const handler = pageEndpoint(async (event, deps) => {
  const token = event.pathParameters?.token ?? '';
  return respond(await completeAction(deps, token), { secrets: deps.secrets, action: `/auth/${encodeURIComponent(token)}`, sandbox: deps.config.ACQUIRER === 'sandbox', acceptLanguage: event.headers?.['accept-language'], now: deps.clock.now(), provider: pageProviderOf(deps.config) });
}, routeDeps);
