import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chooseBrowser } from './chromium';
import { BROWSER_BROKER, startBrowserBroker } from './shared-browser';

/** The environment variable naming the run's own temp directory (see global-teardown.ts). */
export const RUN_TMPDIR = 'CHECKOUT_TEST_RUN_TMPDIR';
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
 *   the browser suites share is launched when the first of them asks (shared-browser.ts).
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
  process.env[BROWSER_BROKER] ??= await startBrowserBroker();
}
