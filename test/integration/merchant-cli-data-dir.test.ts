import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMerchantCommand } from '../../local/merchant-command';
import { inProcess } from '../support/cli';

/**
 * A merchant created in the runner's data directory (DATA_DIR=elsewhere) and looked up by the CLI
 * run without DATA_DIR, from another working directory: the answer names the directory it looked
 * in, says no runner uses it, and how to point the CLI at the runner's.
 */
jest.setTimeout(60_000);

const runnerDir = mkdtempSync(join(tmpdir(), 'checkout-cli-runner-dir-'));
const workDir = mkdtempSync(join(tmpdir(), 'checkout-cli-cwd-'));
const startedIn = process.cwd();

afterAll(() => {
  process.chdir(startedIn);
  rmSync(runnerDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
});

async function cli(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  const { code, stdout, stderr } = await inProcess(runMerchantCommand, env)(...args);
  return { code, out: stdout, err: stderr };
}

it('an unknown merchant in the default data directory is reported with that directory and the way to the runner’s', async () => {
  const created = await cli(['create', '--name', 'Runner Shop'], { DATA_DIR: runnerDir });
  expect(created.code).toBe(0);
  const key = (JSON.parse(created.out) as { merchant_key: string }).merchant_key;

  process.chdir(workDir);
  const defaultDir = join(process.cwd(), '.data');
  const savedDataDir = process.env.DATA_DIR;
  delete process.env.DATA_DIR;
  try {
    const missed = await cli(['show', key], {});
    expect(missed.code).toBe(1);
    expect(missed.out).toBe('');
    expect(missed.err.trim()).toBe(
      `merchant: merchant ${key} not found in the data directory ${defaultDir} (the default, DATA_DIR unset; no runner is using it). ` +
        'A runner started with another DATA_DIR keeps its merchants there: run this with the same DATA_DIR (npm start prints it).',
    );
  } finally {
    if (savedDataDir !== undefined) process.env.DATA_DIR = savedDataDir;
    process.chdir(startedIn);
  }

  // With the runner's directory it is found; a key missing there too is the plain message.
  const found = await cli(['show', key], { DATA_DIR: runnerDir });
  expect(found.code).toBe(0);
  expect(JSON.parse(found.out)).toMatchObject({ name: 'Runner Shop' });
  const unknown = await cli(['show', 'no-such-merchant'], { DATA_DIR: runnerDir });
  expect(unknown.err.trim()).toBe('merchant: merchant no-such-merchant not found');
});
