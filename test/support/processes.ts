import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { bundledEntry } from './run-directory';

/** Runs the project's entry points as separate processes, the way a developer does. */
export const PROJECT_ROOT = resolve(__dirname, '../..');

const childEnv = (env: Record<string, string | undefined>): NodeJS.ProcessEnv => {
  // AWS_LAMBDA_MAX_CONCURRENCY belongs to this process's in-process invocations while they run
  // (local/lambda-context.ts puts the store it needs beside it); a child has no such store.
  const merged: NodeJS.ProcessEnv = { ...process.env, AWS_LAMBDA_MAX_CONCURRENCY: undefined, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env };
  for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
  return merged;
};

/**
 * Starts an entry point from the bundle the global setup built for the run (runner-bundle.ts): plain
 * JavaScript, about 0.3 CPU-seconds to start where tsx's loader takes about one even with its cache
 * warm, on each of the forty-odd children of a run. Without a bundle (a run without the global
 * setup, an entry not bundled) through tsx, as `npm start` runs it. Source maps on either way (tsx
 * turns them on itself).
 */
const spawnEntry = (entry: string, args: readonly string[], env: Record<string, string | undefined>): ChildProcess => {
  const bundle = bundledEntry(entry);
  const node = bundle ? ['--enable-source-maps', bundle] : ['--import', 'tsx', entry];
  return spawn(process.execPath, [...node, ...args], { cwd: PROJECT_ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
};

export interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to its end. */
export function runTs(entry: string, args: readonly string[], env: Record<string, string | undefined> = {}): Promise<Finished> {
  const child = spawnEntry(entry, args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolveDone, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolveDone({ code, signal, stdout, stderr }));
  });
}

export interface Service {
  readonly output: () => string;
  /** What it wrote to stderr so far (the logger's errors go there). */
  readonly errors: () => string;
  /** Resolves with the first stdout line matching the pattern. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends the signal and resolves with how the process ended. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Ends it if it still runs (cleanup after a failed test). */
  kill(): void;
}

/** Starts a long-running entry point (the local runner) and follows its output. */
export function startTs(entry: string, env: Record<string, string | undefined> = {}, args: readonly string[] = []): Service {
  const child = spawnEntry(entry, args, env);
  let stdout = '';
  let stderr = '';
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((w) => w());
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
    notify();
  });
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exitedPromise = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) =>
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      notify();
      resolveExit(exited);
    }),
  );
  const describe = () => `stdout:\n${stdout}\nstderr:\n${stderr}`;

  return {
    output: () => stdout,
    errors: () => stderr,
    waitForLine: (pattern, timeoutMs = 20_000) =>
      new Promise((resolveLine, reject) => {
        const timer = setTimeout(() => done(new Error(`no line matching ${pattern} within ${timeoutMs} ms\n${describe()}`)), timeoutMs);
        const check = () => {
          const line = stdout.split('\n').find((l) => pattern.test(l));
          if (line !== undefined) done(undefined, line);
          else if (exited) done(new Error(`exited (${JSON.stringify(exited)}) before a line matching ${pattern}\n${describe()}`));
        };
        const done = (error?: Error, line?: string) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (error) reject(error);
          else resolveLine(line as string);
        };
        waiters.add(check);
        check();
      }),
    stop: async (signal = 'SIGINT', timeoutMs = 10_000) => {
      if (!exited) child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`did not exit within ${timeoutMs} ms after ${signal}\n${describe()}`)), timeoutMs);
      });
      try {
        return await Promise.race([exitedPromise, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    kill: () => {
      if (!exited) child.kill('SIGKILL');
    },
  };
}

/** A TCP port that was free a moment ago (for a child that needs a fixed PORT). */
export async function freePort(): Promise<number> {
  for (let tries = 0; ; tries++) {
    const port = FIXED_PORTS.from + Math.floor(Math.random() * (FIXED_PORTS.to - FIXED_PORTS.from));
    if (await canListen(port)) return port;
    if (tries > 200) throw new Error(`no free port between ${FIXED_PORTS.from} and ${FIXED_PORTS.to}`);
  }
}

/**
 * Where a test's fixed port comes from: below the kernel's range for ports handed out on `listen(0)`
 * (32768–60999 on Linux). A process given such a port binds its own servers (the local engine, the
 * secrets stand-in) on port 0 before it listens on the one it was given; a port taken from the
 * ephemeral range could be handed to one of them in between (EADDRINUSE).
 */
const FIXED_PORTS = { from: 20_000, to: 32_000 } as const;

const canListen = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
