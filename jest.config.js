/** Jest runs TypeScript through SWC; ESM-only dependencies are transformed too. */
const esmOnly = ['@middy', 'iso-3166', 'jose'];
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.(t|j|mj)s$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testTimeout: 30000,
  setupFiles: ['<rootDir>/test/support/environment.ts'],
  // A temp dir per run (removed after it, leftovers reported) and the browser chosen once.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // On a small machine Jest would run every file in one process, whose heap grows with each file
  // (CDK synths of every stage shape, browsers, local engines) until it runs out. A limit makes it
  // use a worker and start a fresh one once a file leaves it above this size, which leaves the money
  // model (test/integration/money-model.test.ts, about 650 MB over its 200 runs) room to finish.
  workerIdleMemoryLimit: '1GB',
};
