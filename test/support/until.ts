/**
 * Waits until `done()` holds, for at most `withinMs` of real time (not a count of tries: on a
 * loaded machine each try takes longer, and a counted wait ran out before the work it waited for).
 * Resolves whether it held; callers assert on the condition itself for a readable failure.
 */
export async function until(done: () => unknown, { withinMs = 10_000, everyMs = 20 }: { withinMs?: number; everyMs?: number } = {}): Promise<boolean> {
  const giveUpAt = Date.now() + withinMs;
  for (;;) {
    if (await done()) return true;
    if (Date.now() >= giveUpAt) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
