/**
 * How long the long runs run. `npm test` proves each property of the randomized runs (the crash
 * runs, the money model, the property tests over the whole service) on a fast default count; SOAK=1
 * runs the long counts, which `.ci/run` sets. A failure in either reproduces from its printed seed.
 * A test's own variable (CRASH_RUN_KILLS, MONEY_MODEL_RUNS, …) wins over both, for a one-off run.
 */
export function soaking(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.SOAK ?? '';
  if (value === '' || value === '0') return false;
  if (value === '1') return true;
  throw new Error(`SOAK must be 1 (the long runs) or 0/unset (the fast default), got ${JSON.stringify(value)}`);
}

/** `fast` runs by default, `soak` under SOAK=1, or what the variable named `override` says. */
export function soakCount(counts: { readonly fast: number; readonly soak: number; readonly override?: string }, env: NodeJS.ProcessEnv = process.env): number {
  const named = counts.override ? env[counts.override] : undefined;
  if (named !== undefined && named !== '') {
    const n = Number(named);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${counts.override} must be a whole number of runs, got ${JSON.stringify(named)}`);
    return n;
  }
  return soaking(env) ? counts.soak : counts.fast;
}
