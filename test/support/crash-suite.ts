import { runCrashScenario, stopCrashRuns, type CrashRunOptions, type CrashRunResult } from './crash-run';
import { soakCount } from './soak';
import { madeInBeforeAll } from './suites';

/** How long a crash run may take, kills, restarts and reconciling included. */
export const CRASH_RUN_TIMEOUT_MS = 240_000;

export interface FileCrashRun {
  /** What the run found; read in the tests. */
  readonly result: CrashRunResult;
  /** The kills asked for: three by default (the files' thresholds are sized for them), six under SOAK=1, or CRASH_RUN_KILLS. */
  readonly kills: number;
  readonly seed: number;
}

/**
 * One crash run for the whole file (test/support/crash-run.ts), in `beforeAll`. CRASH_RUN_SEED
 * replays a run's decisions; CRASH_RUN_VERBOSE prints its progress as it goes, which a failed run
 * otherwise carries in its message. `summary` is the line printed after the run.
 */
export function crashRunForFile(options: Omit<CrashRunOptions, 'kills' | 'seed' | 'log'> & { readonly name: string; summary(result: CrashRunResult, seed: number): string }): FileCrashRun {
  const { name, summary, ...scenario } = options;
  const seed = Number(process.env.CRASH_RUN_SEED ?? Date.now() % 2 ** 31);
  const kills = soakCount({ fast: 2, soak: 6, override: 'CRASH_RUN_KILLS' });
  let result: CrashRunResult | undefined;
  jest.setTimeout(CRASH_RUN_TIMEOUT_MS);
  beforeAll(async () => {
    const progress: string[] = [];
    const log = (line: string) => (process.env.CRASH_RUN_VERBOSE ? console.log(`[seed ${seed}] ${line}`) : progress.push(line));
    try {
      result = await runCrashScenario({ ...scenario, kills, seed, log });
    } catch (e) {
      throw new Error(`${name} with seed ${seed} failed: ${(e as Error).stack}\n${progress.join('\n')}`);
    }
    console.log(summary(result, seed));
    if (result.divergences.length) console.log(`divergences (seed ${seed}):\n${result.divergences.map((d) => `  ${d.paymentId}: ${d.problem}`).join('\n')}\n${progress.join('\n')}`);
  }, CRASH_RUN_TIMEOUT_MS);
  afterAll(() => stopCrashRuns());
  return { result: madeInBeforeAll('the crash run', () => result), kills, seed };
}

/** A live runner (between kills) never failed a request: no 5xx, none dropped, no exit of its own. */
export function expectLiveRunnerHealthy(result: CrashRunResult): void {
  expect(result.failures).toEqual([]);
  expect(result.fiveXx).toBe(0);
  expect(result.unanswered).toBe(0);
  expect(result.unexpectedExits).toBe(0);
}
