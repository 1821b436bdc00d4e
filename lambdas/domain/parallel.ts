/** Runs `fn` over the items, at most `concurrency` at a time; the results in the items' order. */
export async function inParallel<T, R>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(0, Math.min(concurrency, items.length)) }, worker));
  return out;
}
