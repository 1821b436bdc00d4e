/** Anything a test file starts and must stop: a browser, a test service, a merchant site, a receiver. */
export interface Closable {
  close(): unknown;
}

/**
 * Starts several things at once, like Promise.all, but when one fails the others that did start
 * are closed before the error is rethrown: a failed `beforeAll` must not leave a server or a
 * browser holding the test process open (Jest would never exit).
 */
export async function startAll<T extends readonly Closable[]>(starts: readonly [...{ [K in keyof T]: Promise<T[K]> }]): Promise<T> {
  const settled = await Promise.allSettled(starts);
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) {
    await Promise.allSettled(settled.flatMap((s) => (s.status === 'fulfilled' ? [Promise.resolve().then(() => (s.value as Closable).close())] : [])));
    throw failure.reason;
  }
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
