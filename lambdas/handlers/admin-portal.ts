import { pageChain } from '../middleware/page-chain';
import { htmlResponse, newNonce } from '../checkout-page/headers';
import { portalContentSecurityPolicy, portalSignInOf, renderPortal, renderPortalError } from '../admin-portal/page';
import { readConfig } from '../config';
import type { PortalSignIn } from '../admin-portal/hosted-sign-in';

let signIn: PortalSignIn | undefined;

/** GET /admin: the operators' portal (a page that talks to the admin API with the operator's token). */
// A static page: the page chain without the service's dependencies, so no AWS SDK in this bundle.
export const handler = pageChain(async () => {
  signIn ??= portalSignInOf(readConfig());
  const nonce = newNonce();
  return htmlResponse(200, renderPortal(nonce, signIn), portalContentSecurityPolicy(nonce, signIn), false);
}, renderPortalError);
