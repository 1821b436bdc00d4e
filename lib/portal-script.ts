import * as path from 'node:path';
import { buildSync, type BuildOptions } from 'esbuild';
import { ESBUILD_OPTIONS, PROJECT_ROOT } from './bundling';

/**
 * The operators' portal's browser script: lambdas/admin-portal/client bundled for the browser with
 * the project's esbuild options (minified, no legal comments), as one IIFE the page inlines under
 * its CSP nonce. The CDK stack and the benchmark compile it into the Lambda bundles as a constant
 * (bundleDefines); where the sources run as they are (`npm start`, the tests) the portal builds it
 * on first use (lambdas/admin-portal/script.ts). Either way nothing has to be built beforehand.
 */
export const PORTAL_SCRIPT_ENTRY = path.join(PROJECT_ROOT, 'lambdas/admin-portal/client/main.ts');

/** The global the Lambda bundles get the built script as; lambdas/admin-portal/script.ts reads it. */
export const PORTAL_SCRIPT_GLOBAL = 'BUNDLED_PORTAL_SCRIPT';

/** Browsers the portal supports: the evergreen ones operators use (dialog, Intl, fetch and async functions natively). */
export const BROWSER_TARGET = 'es2020';

export const PORTAL_SCRIPT_OPTIONS = {
  entryPoints: [PORTAL_SCRIPT_ENTRY],
  bundle: ESBUILD_OPTIONS.bundle,
  minify: ESBUILD_OPTIONS.minify,
  legalComments: ESBUILD_OPTIONS.legalComments,
  platform: 'browser',
  format: 'iife',
  target: BROWSER_TARGET,
  absWorkingDir: PROJECT_ROOT,
  write: false,
  logLevel: 'silent',
} as const satisfies BuildOptions;

let built: string | undefined;

/** The script, built once per process. */
export function buildPortalScript(): string {
  if (built !== undefined) return built;
  const result = buildSync(PORTAL_SCRIPT_OPTIONS);
  const script = result.outputFiles[0]?.text ?? '';
  // Inlined into the page: a closing tag inside would end the script early (esbuild escapes those in strings).
  if (!script || /<\/script/i.test(script)) throw new Error(`the portal's script did not build into one inlineable file (${PORTAL_SCRIPT_ENTRY})`);
  built = script;
  return built;
}

/** esbuild `define` for the Lambda bundles: the portal's script as a string constant (bundles that do not read it are unchanged). */
export const bundleDefines = (): Record<string, string> => ({ [PORTAL_SCRIPT_GLOBAL]: JSON.stringify(buildPortalScript()) });
