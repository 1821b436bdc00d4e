/** Direct access to the local engine's LevelDB (dynalite's storage), shared by the start-up steps that need it. */

/** A node-style callback call as a promise. */
export const callback = <T = void>(fn: (cb: (err: Error | null | undefined, value?: T) => void) => void): Promise<T> =>
  new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value as T))));

/**
 * Opens a store dynalite made on a data directory (the engine must not be running on it: LevelDB
 * allows one process). Fails clearly if another process holds it; a lock that a process just killed
 * is still releasing is waited for briefly.
 */
export async function openStorage<S extends { readonly db: { open(): Promise<void> } }>(store: S): Promise<S> {
  for (let tries = 1; ; tries++) {
    try {
      await store.db.open();
      return store;
    } catch (e) {
      if (tries >= 50 || !/lock/i.test(`${(e as Error).message} ${String((e as { cause?: Error }).cause?.message)}`)) throw e;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
