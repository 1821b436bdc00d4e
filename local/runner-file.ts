import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where a running `npm start` says it answers, in its data directory: the merchant helper commands
 * (local/merchant-api-command.ts) send there by default, whatever PORT or HOST the runner took.
 */
export const RUNNER_FILE = 'runner.json';

export interface RunnerAnnouncement {
  readonly pid: number;
  /** The runner's own address (loopback when it listens on every interface). */
  readonly url: string;
}

/** Writes the announcement; the returned function withdraws it (on stop). */
export function announceRunner(dataDir: string, url: string): () => void {
  const file = join(dataDir, RUNNER_FILE);
  const announcement: RunnerAnnouncement = { pid: process.pid, url };
  writeFileSync(file, JSON.stringify(announcement, null, 2), { mode: 0o600 });
  return () => rmSync(file, { force: true });
}
