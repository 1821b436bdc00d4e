import * as path from 'node:path';

/**
 * How every Lambda is bundled, in one place: the CDK stack passes these to NodejsFunction and the
 * benchmark builds with exactly the same options, so measured sizes are deployed sizes.
 */
export const PROJECT_ROOT = path.resolve(__dirname, '..');

/** Node.js major the functions run on (Lambda runtime nodejs24.x). */
export const NODE_TARGET = 'node24';

/**
 * CDK bundles with the project's own esbuild (the version the benchmark measured). Without it,
 * NodejsFunction silently bundles in a Docker image with whatever esbuild that image has, so the
 * synth stops here instead. `resolve` is injectable for the test.
 */
export function assertLocalEsbuild(resolve: (id: string, options: { paths: string[] }) => string = require.resolve): void {
  try {
    resolve('esbuild', { paths: [PROJECT_ROOT] });
  } catch {
    throw new Error(
      'esbuild is not installed in this project (run `npm ci`): cdk synth bundles the functions with the local esbuild only, ' +
        'never with the Docker fallback and its other esbuild version.',
    );
  }
}

/** Module replacements for SDK parts a Lambda never runs; test/bench invokes the bundles to prove it. */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  // Lambda gets credentials from its environment only.
  '@aws-sdk/credential-provider-node': path.join(PROJECT_ROOT, 'lambdas/adapters/aws/lambda-credentials.ts'),
  // Reached only by a dynamic import for event-stream operations, which DynamoDB and Secrets Manager lack (~19 KB).
  '@smithy/core/event-streams': path.join(PROJECT_ROOT, 'lib/bundle-stubs/event-streams.ts'),
  // Built into every DynamoDB client with an endpoint cache no operation of ours uses (~8 KB).
  '@aws-sdk/middleware-endpoint-discovery': path.join(PROJECT_ROOT, 'lib/bundle-stubs/endpoint-discovery.ts'),
  // The SDK's module without adaptive retries (a client-side rate limiter, ~3 KB): no client of ours runs in adaptive mode.
  '@smithy/core/retry': path.join(PROJECT_ROOT, 'lib/bundle-stubs/retry.ts'),
  // The SDK's module without its JavaScript SHA-256 (~3 KB), the fallback for a Node without one in crypto.
  '@smithy/core/checksum': path.join(PROJECT_ROOT, 'lib/bundle-stubs/checksum.ts'),
};

/** Options shared by CDK's NodejsFunction bundling and the benchmark's esbuild build. */
export const ESBUILD_OPTIONS = {
  bundle: true,
  minify: true,
  sourcemap: true,
  platform: 'node',
  format: 'esm',
  target: NODE_TARGET,
  mainFields: ['module', 'main'],
  // ESM output still has to satisfy require() calls inside CommonJS dependencies.
  banner: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);",
  alias: BUNDLE_ALIASES,
  // The SDK is bundled (not taken from the runtime) so the deployed version is the tested one.
  external: [] as string[],
  legalComments: 'none',
  // The page's texts (Arabic, Russian, Ukrainian…) as UTF-8, not \uXXXX escapes: three times fewer bytes for them.
  charset: 'utf8',
} as const;

/**
 * Whether a stage's functions read their source maps at run time (`--enable-source-maps`, about
 * 30 ms of every cold start): every stage but prod. Where they do, the map ships in the zip; prod's
 * go beside the assets (lib/constructs/checkout-function.ts).
 */
export const mapsStackTraces = (stage: string): boolean => stage !== 'prod';

/**
 * What tells a bundle its stage's acquirer (lambdas/wiring/acquirer.ts): esbuild replaces the
 * expression with the name, so the other acquirer's code is left out of every function of the stage.
 */
export const acquirerDefine = (acquirer: 'sandbox' | 's2s-card'): Record<string, string> => ({ 'process.env.CHECKOUT_BUNDLED_ACQUIRER': JSON.stringify(acquirer) });

/**
 * The origin check's secret reader (lambdas/wiring/origin-secret.ts), bundled into every route's
 * function on a stage behind CloudFront only (esbuild `inject`): no handler imports it, so a route
 * that reads no secret of its own carries no Secrets Manager client on the stages without an edge.
 */
export const ORIGIN_SECRET_INJECT = 'lambdas/wiring/origin-secret.ts';
