import { readdirSync, rmSync } from 'node:fs';
import { RUN_TMPDIR, RUNNER_BUNDLE_DIR } from './run-directory';
import { BROWSER_BROKER, stopBrowserBroker } from './shared-browser';

/**
 * What tools leave in the temp dir by design, not a test: tsx's compile cache (tsx-<uid>), and the
 * files Chromium makes for shared memory and downloads (.org.chromium.Chromium.*), which it may
 * leave behind when a renderer outlives the browser's close, and the CDK tests' synths shared by the
 * files of a worker (test/cdk/synth.ts), which a worker running in Jest's own process keeps until
 * that process ends; and the global setup's bundles of the spawned entry points. The run's directory
 * goes with them.
 */
const TOOL_FILES = new RegExp(`^(tsx-\\d+|\\.org\\.chromium\\.Chromium\\..+|checkout-cdk-shared-.+|${RUNNER_BUNDLE_DIR})$`);

/**
 * After the run: the shared browser is closed (it writes into the temp dir too); whatever a test
 * left in the run's temp directory is named (the run fails: a test that makes a temp dir removes
 * it), then the directory goes, so a run leaves nothing in the system temp dir either way.
 */
export default async function globalTeardown(): Promise<void> {
  await stopBrowserBroker();
  delete process.env[BROWSER_BROKER];
  const runDir = process.env[RUN_TMPDIR];
  if (!runDir) return;
  let leftovers: string[] = [];
  try {
    leftovers = readdirSync(runDir).filter((name) => !TOOL_FILES.test(name));
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
  if (leftovers.length) throw new Error(`Tests left these in the temp dir (removed now; the test that made them should): ${leftovers.join(', ')}`);
}
