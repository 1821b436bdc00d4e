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

export interface ImportProbe {
  readonly file: string;
  /** Extra node flags, e.g. --enable-source-maps. */
  readonly nodeFlags?: readonly string[];
}

export interface ImportTiming {
  readonly samplesMs: readonly number[];
  readonly medianMs: number;
  readonly minMs: number;
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
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(out);
      if (code !== 0 || !Number.isFinite(ms)) reject(new Error(`importing ${probe.file} failed (exit ${code}): ${err.trim().split('\n').slice(0, 5).join(' | ')}`));
      else resolve(ms);
    });
  });
}

/**
 * Imports each module in a fresh Node process `runs` times. The probes are interleaved round by
 * round, so a slow spell of the machine hits every row alike. One unrecorded import first warms
 * the Node binary in the file cache (the bundles are there already: they were just written).
 */
export async function measureColdImports(probes: readonly ImportProbe[], runs: number): Promise<ImportTiming[]> {
  if (probes[0]) await importOnce(probes[0]);
  const samples = probes.map(() => [] as number[]);
  for (let round = 0; round < runs; round++) {
    for (const [i, probe] of probes.entries()) samples[i]?.push(await importOnce(probe));
  }
  return samples.map((s) => ({ samplesMs: s, medianMs: median(s), minMs: minimum(s) }));
}
