import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/** The environment variable naming the run's own temp directory (global-setup.ts makes it, global-teardown.ts removes it). */
export const RUN_TMPDIR = 'CHECKOUT_TEST_RUN_TMPDIR';

/** The folder in it that holds the prebuilt entry points (runner-bundle.ts). */
export const RUNNER_BUNDLE_DIR = 'runner-bundle';

const PROJECT_ROOT = resolve(__dirname, '../..');

/** Where the bundle of an entry point (a path from the repository's root) is written, or is looked for. */
export const bundleFileOf = (runDir: string, entry: string): string =>
  join(runDir, RUNNER_BUNDLE_DIR, relative(PROJECT_ROOT, resolve(PROJECT_ROOT, entry)).replace(/\.ts$/, '.cjs'));

/** The run's prebuilt bundle of an entry point, if the global setup built one. */
export function bundledEntry(entry: string): string | undefined {
  const runDir = process.env[RUN_TMPDIR];
  const file = runDir ? bundleFileOf(runDir, entry) : undefined;
  return file && existsSync(file) ? file : undefined;
}
