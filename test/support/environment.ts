import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The test processes run on the machine's Node.js (20.19 or newer); Lambda runs Node.js 24. The
 * SDK's notice about its future minimum version would otherwise print in every test file.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

/**
 * The AsyncLocalStorage instances of the files a Jest worker ran before this one, disabled.
 *
 * Before Node.js 24, every AsyncLocalStorage that has been used stays on a list Node keeps for the
 * process, and each new promise or other async resource visits every storage on it until that
 * storage is disabled. A worker runs file after file in one process, each file loading its modules
 * afresh, so each file adds storages of its own (jest-circus's test context, the local Lambda
 * context, the table access recorder, Powertools' metrics, the Lambda invoke store) and none goes
 * away: each file paid, on every promise, for the storages of all the files before it (14 files in
 * one process: 5 of their 73 CPU-seconds, a share that grows with each file a worker runs). A file
 * runs alone in its worker and its modules are not used after it; setupFiles run before the file's
 * own modules load, so this file's start disables the storages used before it. Node.js 24
 * propagates the stores without that list (no `_enable`): nothing is recorded there.
 */
interface Storages {
  readonly used: Set<AsyncLocalStorage<unknown>>;
}
type Enabling = { _enable?: (this: AsyncLocalStorage<unknown>) => void };
const STORAGES = Symbol.for('checkout.test.asyncLocalStorages');
// node:async_hooks is the process's one module in every file (Jest shares core modules).
const prototype = AsyncLocalStorage.prototype as unknown as Enabling & { [STORAGES]?: Storages };
const enable = prototype._enable;
if (!prototype[STORAGES] && typeof enable === 'function') {
  const storages: Storages = { used: new Set() };
  Object.defineProperty(prototype, STORAGES, { value: storages });
  prototype._enable = function (this: AsyncLocalStorage<unknown>) {
    storages.used.add(this);
    enable.call(this);
  };
}
const before = prototype[STORAGES];
if (before) {
  for (const storage of before.used) storage.disable();
  before.used.clear();
}
