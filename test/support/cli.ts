import type { Io } from '../../local/cli';

/** What a command-line tool printed and how it ended. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A tool's entry point: argv in, exit status out (local/cli.ts runCli). */
export type CliCommand = (argv: readonly string[], io: Io, env: NodeJS.ProcessEnv) => Promise<number>;

/**
 * Runs a tool in this process as its entry point runs it (local/*-cli.ts call the same function with
 * process.argv), its output captured a line per write as console.log would print it. Starting a
 * process per command line costs a second of tsx start-up; each tool keeps one spawned smoke test
 * (test/support/processes.ts runTs) for the entry point itself.
 *
 * The environment is this process's with `env` over it; a variable set to undefined is left out.
 */
export function inProcess(command: CliCommand, env: Record<string, string | undefined> = {}): (...argv: string[]) => Promise<CliRun> {
  return async (...argv) => {
    let stdout = '';
    let stderr = '';
    const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
    for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
    const code = await command(argv, { out: (t) => (stdout += `${t}\n`), err: (t) => (stderr += `${t}\n`) }, merged);
    return { code, stdout, stderr };
  };
}
