/**
 * The frame the project's command-line tools share (the merchant, operator and sandbox CLIs): parse,
 * `--help`, open the target (a deployed stage or the local store), run, and an exit status of 0
 * done, 1 failed, 2 bad usage, with AWS failures put in words an operator can act on.
 */
export class UsageError extends Error {}

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const consoleIo: Io = { out: (t) => console.log(t), err: (t) => console.error(t) };

const STAGE_NAME = /^[a-z][a-z0-9-]{0,29}$/;

/** `--stage` (or CHECKOUT_STAGE): a deployed stage's name, or undefined for the local store. */
export function stageOf(option: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const stage = option ?? (env.CHECKOUT_STAGE || undefined);
  if (stage !== undefined && !STAGE_NAME.test(stage)) throw new UsageError(`--stage must be a stage name like dev or prod, not "${stage}"`);
  return stage;
}

/** AWS failures an operator can act on, in words. */
export function explain(e: Error, target: string): string {
  if (e.name === 'ResourceNotFoundException') return `${target}: not found (is the stage deployed in this account and region?): ${e.message}`;
  if (e.name === 'CredentialsProviderError') return `no AWS credentials found (set AWS_PROFILE or log in): ${e.message}`;
  if (/Region is missing/i.test(e.message)) return 'no AWS region configured (set AWS_REGION or AWS_PROFILE)';
  return `${target}: ${e.name}: ${e.message}`;
}

export interface CliTarget {
  /** Where the command acts, for error messages. */
  readonly description: string;
  close(): Promise<void>;
}

export interface CliSpec<C, T extends CliTarget> {
  /** The tool's name, prefixed to its errors. */
  readonly name: string;
  readonly usage: string;
  parse(): C | 'help';
  open(command: C): Promise<T>;
  /** What to print on success. */
  run(command: C, target: T): Promise<string>;
  /** Failures whose message is already written for the operator. */
  readable?(e: unknown): boolean;
}

/** Runs one command line; resolves with the exit status (0 done, 1 failed, 2 bad usage). */
export async function runCli<C, T extends CliTarget>(spec: CliSpec<C, T>, io: Io): Promise<number> {
  const usageError = (e: UsageError) => {
    io.err(`${spec.name}: ${e.message}\nRun with --help for usage.`);
    return 2;
  };
  let command: C | 'help';
  try {
    command = spec.parse();
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    return usageError(e);
  }
  if (command === 'help') {
    io.out(spec.usage);
    return 0;
  }
  let target: T | undefined;
  try {
    target = await spec.open(command);
    io.out(await spec.run(command, target));
    return 0;
  } catch (e) {
    if (e instanceof UsageError) return usageError(e);
    io.err(`${spec.name}: ${spec.readable?.(e) ? (e as Error).message : explain(e as Error, target?.description ?? 'target')}`);
    return 1;
  } finally {
    await target?.close();
  }
}

/**
 * A tool's entry point (`npm run merchant`, `npm run operator`): runs the process's command line
 * and sets its exit status; an unexpected failure is printed whole and exits 1.
 */
export function runMain(name: string, run: (argv: readonly string[]) => Promise<number>): void {
  // Supports Node.js 20.19+ (Lambda runs 22); the SDK's notice about its future minimum is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  run(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      console.error(`${name}:`, e);
      process.exitCode = 1;
    },
  );
}

/** A command that could not be done for a reason the operator can read (exit 1). */
export class CommandFailure extends Error {}
