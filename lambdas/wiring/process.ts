import type { Deps } from '../container';

/**
 * The process's dependencies, built by the part each function uses (lambdas/wiring/*.ts), so a
 * function bundles the clients of its own capabilities only: a route that reads no secret carries
 * no Secrets Manager client. The local runner and the tests inject a whole set instead (setDeps):
 * every part then answers from it, so they run the same handlers with their clock, ids and stand-ins.
 */
let injected: Deps | undefined;
/** Bumped by setDeps: parts built before it are built again. */
let generation = 0;

/** Replaces the process-wide dependencies (the local runner and tests inject clock and ids here). */
export function setDeps(next: Deps | undefined): void {
  injected = next;
  generation++;
}

export const injectedDeps = (): Deps | undefined => injected;

/**
 * One capability's dependencies, built on first use (so a bad configuration fails at cold start)
 * and kept for the process; the injected set when there is one.
 */
export function part<K extends keyof Deps>(build: () => Pick<Deps, K>): () => Pick<Deps, K> {
  let built: { readonly deps: Pick<Deps, K>; readonly generation: number } | undefined;
  return () => {
    if (injected) return injected;
    if (built?.generation !== generation) built = { deps: build(), generation };
    return built.deps;
  };
}
