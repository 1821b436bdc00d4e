/** Jest runs TypeScript through SWC; ESM-only dependencies are transformed too. */
const esmOnly = ['@middy', 'iso-3166', 'jose'];
/**
 * Long variants that run only under SOAK=1 (`npm run test:soak`, `.ci/run`; docs/testing.md "The
 * soak variable"), where the fast default keeps a representative: the processing page on the S2S
 * CARD connector (checkout-processing.test.ts proves the page on the sandbox, s2s-card-local.test.ts
 * pays through S2S CARD in the browser) and the S2S ledger run against a misbehaving gateway (the
 * crash runs and the money model keep S2S CARD under lost answers and kills in the fast default).
 * test/support/soak.ts refuses a SOAK other than 1, 0 or unset.
 */
const SOAK_ONLY = ['/test/e2e/checkout-processing-s2s\\.test\\.ts$', '/test/e2e/s2s-card-ledger\\.test\\.ts$'];
const soaking = process.env.SOAK === '1';
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', ...(soaking ? [] : SOAK_ONLY)],
  transform: {
    '^.+\\.(t|j|mj)s$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testTimeout: 30000,
  setupFiles: ['<rootDir>/test/support/environment.ts'],
  // Jest's runtime, with aws-cdk-lib, constructs, cdk-nag, playwright-core and dynalite loaded once per process (test/support/jest-runtime.js).
  runtime: '<rootDir>/test/support/jest-runtime.js',
  // A temp dir per run (removed after it, leftovers reported) and the browser chosen once.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Five workers on a two-core machine (docs/testing.md): files wait on the processes they spawn
  // (the runner killed and restarted, the browser, the gateway's delays), and with two workers a
  // fifth of the CPU sat idle. Three kept the cores 175 % busy, four and five 179 %; with five the
  // whole run took 5 min 54 s. Jest's default on two cores is one. The longest files start first
  // (Jest orders by the durations of the last run).
  maxWorkers: 5,
  // A worker's heap grows with each file (CDK synths of every stage shape, local engines); a worker
  // left above this size after a file is replaced by a fresh one, which keeps the workers well
  // inside a small machine's memory and leaves the money model (about 650 MB over its runs) room.
  workerIdleMemoryLimit: '1GB',
};
