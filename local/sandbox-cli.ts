import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createDocumentClient } from '../lambdas/adapters/dynamodb/client';
import { sandboxLedger } from '../lambdas/adapters/sandbox-acquirer/ledger-store';
import { readConfig } from '../lambdas/config';
import { stageEnvironment } from './stack-outputs';
import { dataDirectory, openLocalStore } from './local-store';
import { consoleIo, runCli, stageOf, UsageError, type Io } from './cli';

// Supports Node.js 20.19+ (Lambda runs 22); the SDK's notice about its future minimum is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export const USAGE = `Usage: npm run -s sandbox -- ledger PAYMENT_ID [--stage STAGE]

Commands:
  ledger PAYMENT_ID               Print the sandbox acquirer's own records of a payment as a JSON
                                  array, oldest first: every operation it was asked for (sale, auth,
                                  recurring, capture, refund, void, reversal) with the amount as a
                                  decimal string, the currency, the outcome (approved, declined,
                                  pending), the idempotency key and the acquirer's reference.
                                  A payment the acquirer never saw prints [].

Target:
  (default)                       The local store in DATA_DIR (default .data): the running
                                  local runner's, or opened here when it is not running.
  --stage STAGE                   The deployed stack of STAGE (also CHECKOUT_STAGE), with the
                                  default AWS credentials and region (AWS_PROFILE, AWS_REGION).

Exit status: 0 done, 1 failed, 2 bad usage.
`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface SandboxCommand {
  readonly name: 'ledger';
  readonly paymentId: string;
  readonly stage?: string;
}

export function parseSandboxCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): SandboxCommand | 'help' {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: { help: { type: 'boolean', short: 'h' }, stage: { type: 'string' } }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (parsed.values.help) return 'help';
  const [name, paymentId, ...rest] = parsed.positionals;
  if (!name) throw new UsageError('a command is needed: ledger PAYMENT_ID');
  if (name !== 'ledger') throw new UsageError(`unknown command "${name}"; the command is ledger PAYMENT_ID`);
  if (!paymentId) throw new UsageError('ledger needs a payment id: ledger PAYMENT_ID');
  if (rest.length) throw new UsageError(`unexpected arguments: ${rest.join(' ')}`);
  if (!UUID.test(paymentId)) throw new UsageError(`PAYMENT_ID must be a payment id (a UUID), not "${paymentId}"`);
  const stage = stageOf(parsed.values.stage, env);
  return { name, paymentId: paymentId.toLowerCase(), ...(stage ? { stage } : {}) };
}

interface Target {
  readonly tableName: string;
  readonly endpoint?: string;
  readonly description: string;
  close(): Promise<void>;
}

/** The same targets as the merchant CLI: a deployed stage, or the local store in DATA_DIR. */
async function openTarget(stage: string | undefined, env: NodeJS.ProcessEnv): Promise<Target> {
  if (stage !== undefined) {
    const environment = await stageEnvironment(stage);
    return { tableName: environment.TABLE_NAME!, description: `stage ${stage} (table ${environment.TABLE_NAME})`, close: async () => undefined };
  }
  const dataDir = env.DATA_DIR ? resolve(env.DATA_DIR) : dataDirectory();
  const store = await openLocalStore(dataDir);
  const config = readConfig(store.env);
  return { tableName: config.TABLE_NAME, endpoint: config.DYNAMODB_ENDPOINT, description: `local store in ${dataDir}`, close: store.close };
}


/** `npm run sandbox -- ledger PAYMENT_ID`; resolves with the exit status (0 done, 1 failed, 2 bad usage). */
export function runSandboxCommand(argv: readonly string[], io: Io = consoleIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return runCli<SandboxCommand, Target>(
    {
      name: 'sandbox',
      usage: USAGE,
      parse: () => parseSandboxCommand(argv, env),
      open: (command) => openTarget(command.stage, env),
      run: async (command, target) => {
        const db = createDocumentClient({ endpoint: target.endpoint });
        try {
          return JSON.stringify(await sandboxLedger(db, target.tableName, command.paymentId), null, 2);
        } finally {
          db.destroy();
        }
      },
    },
    io,
  );
}

if (require.main === module) {
  runSandboxCommand(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      console.error('sandbox:', e);
      process.exitCode = 1;
    },
  );
}
