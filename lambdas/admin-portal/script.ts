import { portalClient } from './client';

/**
 * The portal's script, inlined with the CSP nonce. It is written as a function in client.ts so it
 * is type-stripped and minified with everything else, and serialized here into the page.
 */
export const portalScript = `(${portalClient.toString()})();`;
