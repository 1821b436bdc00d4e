/** Compiled into the Lambda bundle by the stack (lib/portal-script.ts bundleDefines); absent where the sources run as they are. */
declare const BUNDLED_PORTAL_SCRIPT: string | undefined;

/**
 * The portal's browser script (client/main.ts, bundled), inlined into the page with its CSP nonce.
 * In a Lambda bundle it is a constant and the branch below, with esbuild, is left out of the bundle;
 * under `npm start` and the tests it is built from the sources on first use.
 */
export function portalScript(): string {
  if (typeof BUNDLED_PORTAL_SCRIPT !== 'string') return (require('../../lib/portal-script') as typeof import('../../lib/portal-script')).buildPortalScript();
  return BUNDLED_PORTAL_SCRIPT;
}
