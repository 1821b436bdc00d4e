import { SandboxAcquirer } from '../adapters/sandbox-acquirer/sandbox-acquirer';
import { part } from './process';
import { storeDeps, type StoreKeys } from './stores';

/** The simulated acquirer's own pages (3-D Secure challenge, bank redirect): the sandbox alone, no secret. */
// Pure: a bundle that never calls it (an S2S CARD stage's) leaves it, and the sandbox, out.
export const sandboxDeps = /* @__PURE__ */ part<StoreKeys | 'sandbox'>(() => {
  const stores = storeDeps();
  return { ...stores, sandbox: new SandboxAcquirer(stores.db, stores.config.TABLE_NAME, { clock: stores.clock }) };
});
