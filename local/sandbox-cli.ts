import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createDocumentClient } from '../lambdas/adapters/dynamodb/client';
import { sandboxLedger } from '../lambdas/adapters/sandbox-acquirer/ledger-store';
import { SandboxAcquirer } from '../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import { ERRORS } from '../lambdas/domain/errors';
import { formatMinor, parseAmount } from '../lambdas/domain/money';
import { localClock } from './clock';
import { readConfig } from '../lambdas/config';
import { stageEnvironment } from './stack-outputs';
import { dataDirectory, openLocalStore } from './local-store';
import { consoleIo, runCli, stageOf, UsageError, type Io } from './cli';

// Supports Node.js 20.19+ (Lambda runs 22); the SDK's notice about its future minimum is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export const USAGE = `Usage: npm run -s sandbox -- ledger PAYMENT_ID [--stage STAGE]
       npm run -s sandbox -- chargeback PAYMENT_ID [AMOUNT] [REASON] [--stage STAGE]

Commands:
  ledger PAYMENT_ID               Print the sandbox acquirer's own records of a payment as a JSON
                                  array, oldest first: every operation it was asked for (sale, auth,
                                  recurring, capture, refund, void, reversal) with the amount as a
                                  decimal string, the currency, the outcome (approved, declined,
                                  pending), the idempotency key and the acquirer's reference.
                                  A payment the acquirer never saw prints [].
  chargeback PAYMENT_ID [AMOUNT] [REASON]
                                  Raise a chargeback at the sandbox acquirer, as a cardholder's
                                  bank would: AMOUNT (decimal, the payment's currency; default all
                                  that is left after refunds and earlier chargebacks) with the
                                  scheme's REASON code (default 4837). Prints it as JSON. The
                                  service records it at its reconciler's next run (every 10 s
                                  locally, every minute on AWS): status chargeback, a chargeback
                                  callback to the merchant. Refused with 208010 when AMOUNT is
                                  more than is left, 208014 when nothing was captured.

Target:
  (default)                       The local store in DATA_DIR (default .data): the running
                                  local runner's, or opened here when it is not running.
  --stage STAGE                   The deployed stack of STAGE (also CHECKOUT_STAGE), with the
                                  default AWS credentials and region (AWS_PROFILE, AWS_REGION).

Exit status: 0 done, 1 failed, 2 bad usage.
`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type SandboxCommand =
  | { readonly name: 'ledger'; readonly paymentId: string; readonly stage?: string }
  | { readonly name: 'chargeback'; readonly paymentId: string; readonly amount?: string; readonly reasonCode?: string; readonly stage?: string };

/** A scheme's reason code as acquirers write them (`4837`, `10.4`, `UA02`). */
const REASON_CODE = /^[A-Za-z0-9][A-Za-z0-9.\-]{0,15}$/;
const AMOUNT = /^\d{1,12}(\.\d{1,3})?$/;

export function parseSandboxCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): SandboxCommand | 'help' {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: { help: { type: 'boolean', short: 'h' }, stage: { type: 'string' } }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (parsed.values.help) return 'help';
  const [name, paymentId, ...rest] = parsed.positionals;
  if (!name) throw new UsageError('a command is needed: ledger PAYMENT_ID or chargeback PAYMENT_ID [AMOUNT] [REASON]');
  if (name !== 'ledger' && name !== 'chargeback') throw new UsageError(`unknown command "${name}"; the commands are ledger PAYMENT_ID and chargeback PAYMENT_ID [AMOUNT] [REASON]`);
  if (!paymentId) throw new UsageError(`${name} needs a payment id: ${name} PAYMENT_ID`);
  if (!UUID.test(paymentId)) throw new UsageError(`PAYMENT_ID must be a payment id (a UUID), not "${paymentId}"`);
  const stage = stageOf(parsed.values.stage, env);
  const base = { paymentId: paymentId.toLowerCase(), ...(stage ? { stage } : {}) };
  if (name === 'ledger') {
    if (rest.length) throw new UsageError(`unexpected arguments: ${rest.join(' ')}`);
    return { name, ...base };
  }
  const [amount, reasonCode, ...more] = rest;
  if (more.length) throw new UsageError(`unexpected arguments: ${more.join(' ')}`);
  if (amount !== undefined && !AMOUNT.test(amount)) throw new UsageError(`AMOUNT must be a decimal amount such as 10.00, not "${amount}"`);
  if (reasonCode !== undefined && !REASON_CODE.test(reasonCode)) throw new UsageError(`REASON must be a reason code such as 4837 or 10.4, not "${reasonCode}"`);
  return { name, ...base, ...(amount !== undefined ? { amount } : {}), ...(reasonCode !== undefined ? { reasonCode } : {}) };
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


/** The chargeback command: the amount read in the payment's currency (its authorization's at the sandbox). */
async function raiseChargeback(sandbox: SandboxAcquirer, db: ReturnType<typeof createDocumentClient>, tableName: string, command: Extract<SandboxCommand, { name: 'chargeback' }>): Promise<string> {
  const records = await sandboxLedger(db, tableName, command.paymentId);
  const currency = records.find((r) => ['sale', 'auth', 'recurring'].includes(r.operation) && r.outcome === 'approved')?.currency;
  let amountMinor: number | undefined;
  if (command.amount !== undefined && currency) {
    const parsed = parseAmount(command.amount, currency);
    if (typeof parsed === 'string') throw new UsageError(`AMOUNT ${command.amount} is not an amount in ${currency}`);
    amountMinor = parsed.amountMinor;
  }
  const result = await sandbox.raiseChargeback(command.paymentId, amountMinor, command.reasonCode);
  if ('refused' in result) {
    const e = ERRORS[result.refused];
    throw new ChargebackRefused(`${e.code} ${e.message}`);
  }
  const c = result.raised;
  return JSON.stringify({ payment_id: command.paymentId, amount: formatMinor(c.amountMinor, currency!), currency, reason_code: c.reasonCode, chargeback_date: c.chargebackDate, bank_date: c.bankDate, acquirer_ref: c.acquirerRef }, null, 2);
}

/** The sandbox refused the chargeback (its message is the platform's code and text). */
class ChargebackRefused extends Error {}

/** `npm run sandbox -- ledger PAYMENT_ID`; resolves with the exit status (0 done, 1 failed, 2 bad usage). */
export function runSandboxCommand(argv: readonly string[], io: Io = consoleIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return runCli<SandboxCommand, Target>(
    {
      name: 'sandbox',
      usage: USAGE,
      parse: () => parseSandboxCommand(argv, env),
      open: (command) => openTarget(command.stage, env),
      readable: (e) => e instanceof ChargebackRefused,
      run: async (command, target) => {
        const db = createDocumentClient({ endpoint: target.endpoint });
        try {
          if (command.name === 'ledger') return JSON.stringify(await sandboxLedger(db, target.tableName, command.paymentId), null, 2);
          return await raiseChargeback(new SandboxAcquirer(db, target.tableName, { clock: localClock() }), db, target.tableName, command);
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
