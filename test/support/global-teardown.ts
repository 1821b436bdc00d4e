import { readdirSync, rmSync } from 'node:fs';
import { RUN_TMPDIR } from './global-setup';

/** Caches tools keep in the temp dir by design (tsx compiles into tsx-<uid>); not a test's leftovers. */
const TOOL_CACHES = /^tsx-\d+$/;

/**
 * After the run: whatever a test left in the run's temp directory is named (the run fails: a test
 * that makes a temp dir removes it), then the directory goes, so a run leaves nothing in the system
 * temp dir either way.
 */
export default function globalTeardown(): void {
  const runDir = process.env[RUN_TMPDIR];
  if (!runDir) return;
  let leftovers: string[] = [];
  try {
    leftovers = readdirSync(runDir).filter((name) => !TOOL_CACHES.test(name));
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
  if (leftovers.length) throw new Error(`Tests left these in the temp dir (removed now; the test that made them should): ${leftovers.join(', ')}`);
}
