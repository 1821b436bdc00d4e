const { createRequire } = require('node:module');
const { default: Runtime } = require('jest-runtime');

/**
 * Jest's runtime, with the CDK's libraries loaded once per test process instead of once per file.
 *
 * Jest loads every module afresh in each test file; aws-cdk-lib is some thousand modules, and a CDK
 * test file spent about a second and a half of a core loading it before it made or read a single
 * stack (24 files in the CDK run, in one process). These packages are required as Node.js requires
 * them, from its own module cache, by every file of the process: the same classes in every file,
 * so the stacks test/cdk/synth.ts shares are of the classes each file checks against. They keep no
 * state a test reads between files (token numbers and the like only), no test mocks them, and they
 * do not read Jest's fake timers. `npx jest --runInBand test/cdk`: about 125 -> 79 CPU-seconds, 100 -> 80 s.
 */
const SHARED = /^(aws-cdk-lib|constructs|cdk-nag)(\/|$)/;

module.exports = class CheckoutRuntime extends Runtime {
  requireModuleOrMock(from, moduleName) {
    if (SHARED.test(moduleName)) return createRequire(from)(moduleName);
    return super.requireModuleOrMock(from, moduleName);
  }
};
