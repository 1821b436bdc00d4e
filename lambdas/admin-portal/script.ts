import { portalClient } from './client';
import { hostedSignIn } from './hosted-sign-in';

/**
 * The portal's script, inlined with the CSP nonce. It is written as a function in client.ts so it
 * is type-stripped and minified with everything else, and serialized here into the page. esbuild's
 * keepNames (tsx under `npm start`, the Lambda bundle) wraps named functions in a `__name` helper
 * that lives outside the function, so the page brings its own no-op one.
 */
export const portalScript = `(function(){var __name=function(f){return f};(${portalClient.toString()})((${hostedSignIn.toString()})());})();`;
