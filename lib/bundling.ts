import * as path from 'node:path';

/**
 * How every Lambda is bundled, in one place: the CDK stack passes these to NodejsFunction and the
 * benchmark builds with exactly the same options, so measured sizes are deployed sizes.
 */
export const PROJECT_ROOT = path.resolve(__dirname, '..');

/** Node.js major the functions run on (Lambda runtime nodejs22.x). */
export const NODE_TARGET = 'node22';

/** Module replacements: Lambda gets credentials from its environment only. */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': path.join(PROJECT_ROOT, 'lambdas/adapters/aws/lambda-credentials.ts'),
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
} as const;
