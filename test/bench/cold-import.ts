import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { median, minimum } from './stats';

/** What a handler module may read at import; nothing here reaches the network. */
export const IMPORT_ENVIRONMENT: Readonly<Record<string, string>> = {
  TABLE_NAME: 'bench-table',
  MERCHANT_SECRET_PREFIX: 'checkout/bench/merchants/',
  AWS_REGION: 'eu-west-1',
};

/** Runs in the fresh process: the time from import() to the module being evaluated. */
const PROBE = 'const t=performance.now();await import(process.argv[1]);process.stdout.write(String(performance.now()-t));';

/** A module that takes longer than this to import is reported as failing, not waited for. */
const IMPORT_TIMEOUT_MS = 30_000;

export interface ImportProbe {
  readonly file: string;
  /** Extra node flags, e.g. --enable-source-maps. */
  readonly nodeFlags?: readonly string[];
}

export interface ImportTiming {
  readonly samplesMs: readonly number[];
  /** NaN when the module could not be imported. */
  readonly medianMs: number;
  readonly minMs: number;
  /** Why the import failed: the handler would crash at Lambda init too. */
  readonly error?: string;
}

export interface ImportPlan {
  readonly maxRuns: number;
  readonly minRuns: number;
  /** Rounds stop once another would overrun this (after minRuns), so many routes keep the run short. */
  readonly budgetMs: number;
}

/** The error line of a failed import's stderr, not the minified source line Node prints above it. */
function errorLine(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  const line = lines.filter((l) => /^[\w.]*(Error|Exception)\b/.test(l)).pop() ?? lines.pop() ?? 'no output';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

function importOnce(probe: ImportProbe): Promise<number> {
  return new Promise((resolve, reject) => {
    // A clean environment: no NODE_OPTIONS (the tsx loader) and nothing of this shell leaks in.
    const child = spawn(process.execPath, [...(probe.nodeFlags ?? []), '--input-type=module', '-e', PROBE, pathToFileURL(probe.file).href], {
      env: { ...IMPORT_ENVIRONMENT, PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill(), IMPORT_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ms = Number(out);
      if (signal) reject(new Error(`no result within ${IMPORT_TIMEOUT_MS / 1000} s (${signal})`));
      else if (code !== 0 || out === '' || !Number.isFinite(ms)) reject(new Error(`${errorLine(err)} (exit ${code})`));
      else resolve(ms);
    });
  });
}

/**
 * Imports each module in a fresh Node process, up to `plan.maxRuns` times. The probes are
 * interleaved round by round, so a slow spell of the machine hits every row alike. One unrecorded
 * import first warms the Node binary in the file cache (the bundles are there already: they were
 * just written). A module that fails to import is not retried.
 */
export async function measureColdImports(probes: readonly ImportProbe[], plan: ImportPlan): Promise<ImportTiming[]> {
  if (probes[0]) await importOnce(probes[0]).catch(() => undefined);
  const samples = probes.map(() => [] as number[]);
  const errors: (string | undefined)[] = probes.map(() => undefined);
  const started = performance.now();
  for (let round = 0; round < plan.maxRuns; round++) {
    for (const [i, probe] of probes.entries()) {
      if (errors[i] !== undefined) continue;
      try {
        samples[i]?.push(await importOnce(probe));
      } catch (e) {
        errors[i] = (e as Error).message;
      }
    }
    const elapsed = performance.now() - started;
    if (round + 1 >= plan.minRuns && elapsed + elapsed / (round + 1) > plan.budgetMs) break;
  }
  return samples.map((s, i) => {
    const error = errors[i];
    return s.length && error === undefined ? { samplesMs: s, medianMs: median(s), minMs: minimum(s) } : { samplesMs: s, medianMs: NaN, minMs: NaN, error: error ?? 'no samples' };
  });
}
