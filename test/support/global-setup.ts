import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chooseBrowser } from './chromium';
import { RUN_TMPDIR } from './run-directory';
import { buildRunnerBundle } from './runner-bundle';
import { BROWSER_BROKER, startBrowserBroker } from './shared-browser';

const RUN_DIR_PREFIX = 'checkout-test-run-';
const OF_PROCESS = new RegExp(`^${RUN_DIR_PREFIX}(\\d+)-`);

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Once per Jest run, before the workers start (they inherit this environment):
 * - the run gets a temp directory of its own, and TMPDIR points there, so whatever a test, a child
 *   process or the browser puts in "the temp dir" is found and removed by the teardown instead of
 *   piling up in the system's. A run stopped before its teardown (Ctrl-C, a closed pipe) leaves its
 *   directory: the next run removes those whose Jest process is gone;
 * - the browser the e2e tests will use is chosen, and a bundled one unpacked, once; the one browser
 *   the browser suites share is launched when the first of them asks (shared-browser.ts);
 * - the entry points the tests spawn (the runner, the CLIs) are bundled into it, so each child starts
 *   as plain JavaScript instead of through tsx (runner-bundle.ts: about 2 CPU-seconds here, about
 *   half a CPU-second less on each of some forty starts; docs/testing.md).
 */
export default async function globalSetup(): Promise<void> {
  if (!process.env[RUN_TMPDIR]) {
    const systemTmp = tmpdir();
    for (const name of readdirSync(systemTmp)) {
      const pid = OF_PROCESS.exec(name)?.[1];
      if (pid && !alive(Number(pid))) rmSync(join(systemTmp, name), { recursive: true, force: true });
    }
    const runDir = mkdtempSync(join(systemTmp, `${RUN_DIR_PREFIX}${process.pid}-`));
    process.env[RUN_TMPDIR] = runDir;
    process.env.TMPDIR = runDir;
  }
  try {
    const browser = chooseBrowser();
    process.stdout.write(`\nbrowser tests: ${browser.source} Chromium, ${browser.executablePath}\n`);
  } catch (error) {
    // Said once here; each browser suite fails with the same message, the others run.
    process.stdout.write(`\nbrowser tests: no browser: ${(error as Error).message}\n`);
  }
  const bundled = buildRunnerBundle(process.env[RUN_TMPDIR]!).catch((error: Error) => {
    // The children then start through tsx, which meets the same sources and says what is wrong there.
    process.stdout.write(`\nspawned entry points: through tsx, the bundle did not build: ${error.message}\n`);
  });
  process.env[BROWSER_BROKER] ??= await startBrowserBroker();
  await bundled;
}
