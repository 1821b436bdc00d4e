const { createRequire } = require('node:module');
const { default: Runtime } = require('jest-runtime');

/**
 * Jest's runtime, with a few large libraries loaded once per test process instead of once per file.
 *
 * Jest loads every module afresh in each test file. These packages are required as Node.js requires
 * them, from its own module cache, by every file of the process:
 * - aws-cdk-lib, constructs and cdk-nag: some thousand modules, about a second and a half of a core
 *   per CDK file before it made or read a single stack. Every file then has the same classes, so the
 *   stacks test/cdk/synth.ts shares over the CDK run are of the classes each file checks against
 *   (cdk-nag's rules, a new synthesis). `npx jest --runInBand test/cdk`: about 125 -> 79
 *   CPU-seconds, 100 -> 80 s.
 * - playwright-core: about half a second of a core per browser file (and Jest no longer maps the
 *   stack each Playwright call captures). 16 browser files on one worker: 93 -> 83 CPU-seconds.
 * - dynalite, which every test service starts (local/backend.ts): about 50 ms a file.
 * None keeps state a test reads from one file to the next, none is mocked, and no test uses Jest's
 * fake timers (these would not see them). Their objects are of Node's own realm, not the test
 * file's: an error they throw is no `instanceof Error` of the test file (check the message, the
 * name or the package's own error class, as the tests do).
 */
const SHARED = /^(aws-cdk-lib|constructs|cdk-nag|playwright-core|dynalite)(\/|$)/;

module.exports = class CheckoutRuntime extends Runtime {
  requireModuleOrMock(from, moduleName) {
    if (SHARED.test(moduleName)) return createRequire(from)(moduleName);
    return super.requireModuleOrMock(from, moduleName);
  }
};
