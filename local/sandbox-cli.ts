import { resolve } from 'node:path';
import { createDocumentClient } from '../lambdas/adapters/dynamodb/client';
import { sandboxLedger } from '../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import { readConfig } from '../lambdas/config';
import { dataDirectory, openLocalStore } from './local-store';

// Supports Node.js 20.19+ (Lambda runs 22); the SDK's notice about its future minimum is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = `Usage: npm run -s sandbox -- ledger PAYMENT_ID

Prints the sandbox acquirer's own records of a payment as a JSON array, oldest first: each
operation it was asked for (sale, auth, capture, refund, void, reversal, recurring), the amount as
a decimal string, the currency and its outcome (approved, declined, pending). Works whether or not
npm start runs, on the data directory DATA_DIR (default .data).`;

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** `npm run sandbox -- ledger PAYMENT_ID`; exit codes: 0 printed, 2 usage. */
export async function runSandboxCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, out: (s: string) => void = console.log, err: (s: string) => void = console.error): Promise<number> {
  const [command, paymentId, ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    out(USAGE);
    return 0;
  }
  if (command !== 'ledger' || !paymentId || rest.length) {
    err(USAGE);
    return 2;
  }
  if (!UUID.test(paymentId)) {
    err(`sandbox: PAYMENT_ID must be a payment id (a UUID), not "${paymentId}"`);
    return 2;
  }
  const dataDir = env.DATA_DIR ? resolve(env.DATA_DIR) : dataDirectory();
  const store = await openLocalStore(dataDir);
  const config = readConfig(store.env);
  const db = createDocumentClient({ endpoint: config.DYNAMODB_ENDPOINT });
  try {
    out(JSON.stringify(await sandboxLedger(db, config.TABLE_NAME, paymentId), null, 2));
    return 0;
  } finally {
    db.destroy();
    await store.close();
  }
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
