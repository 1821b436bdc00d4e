import { pageEndpoint } from '../middleware/page-endpoint';
import { htmlResponse, newNonce } from '../checkout-page/respond';
import { portalContentSecurityPolicy, renderPortal } from '../admin-portal/page';

/** GET /admin: the operators' portal (a page that talks to the admin API with the operator's token). */
export const handler = pageEndpoint(async () => {
  const nonce = newNonce();
  return htmlResponse(200, renderPortal(nonce), portalContentSecurityPolicy(nonce), false);
});
