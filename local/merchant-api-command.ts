import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CommandFailure, runCli, UsageError, type Io } from './cli';
import { dataDirectory } from './local-store';
import { RUNNER_FILE, type RunnerAnnouncement } from './runner-file';
import {
  amountDecimalsHint,
  isSignedMessage,
  merchantRequest,
  RunnerUnreachable,
  SIGNED_MESSAGES,
  signMessage,
  type MerchantCredentials,
  type SignedMessage,
} from './merchant-requests';

/**
 * `npm run merchant -- sign|status|refund|void …`: the demo merchant's side of the protocol, for
 * trying the API without writing a client. `sign` prints a message's hash; the others sign a
 * request, POST it to the local runner (or a deployed stage's API with --base-url and the
 * merchant's own key and password) and print the JSON answered.
 */
export const MERCHANT_API_COMMANDS = ['sign', 'status', 'refund', 'void'] as const;
type ApiCommandName = (typeof MERCHANT_API_COMMANDS)[number];

export const MERCHANT_API_USAGE = `The merchant API, as the demo merchant of npm start (signed with its password):
  sign MESSAGE VALUE ...          Print the hash of a message, its signed values given in the
                                  protocol's order (the amount exactly as it will be sent):
${Object.entries(SIGNED_MESSAGES)
  .map(([m, fields]) => `                                    ${m.padEnd(10)}${fields.join(' ')}`)
  .join('\n')}
                                  e.g. after editing the printed curl's amount:
                                  sign session demo-1 25.00 USD 'Demo order'
  status PAYMENT_ID               Ask the payment's status (--order-id ORDER: the order's latest).
  refund PAYMENT_ID [AMOUNT]      Refund AMOUNT (default: the payment's whole amount).
  void PAYMENT_ID                 Void a settled payment (until 21:00 UTC+3 of its day).
  These print the JSON answered; a refusal (HTTP status not 200) prints it too, on stderr with
  the reason, and exits 1.
  --base-url URL                  Where to send them: default the running npm start's address
                                  (DATA_DIR/runner.json), else http://127.0.0.1:\${PORT:-3000}.
                                  A deployed stage: its ApiUrl output.
  --merchant-key KEY --password PASSWORD
                                  Whose request: default the demo merchant (DEMO_MERCHANT_KEY and
                                  DEMO_MERCHANT_PASSWORD, else DATA_DIR/demo-merchant.json).
`;

export const isMerchantApiCommand = (argv: readonly string[]): boolean => {
  const first = argv.find((a) => !a.startsWith('-'));
  return first !== undefined && (MERCHANT_API_COMMANDS as readonly string[]).includes(first);
};

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  'base-url': { type: 'string' },
  'merchant-key': { type: 'string' },
  password: { type: 'string' },
  'order-id': { type: 'string' },
} as const;

export type ApiCommand =
  | { readonly name: 'sign'; readonly message: SignedMessage; readonly values: readonly string[]; readonly who: Who }
  | { readonly name: 'status'; readonly paymentId?: string; readonly orderId?: string; readonly who: Who }
  | { readonly name: 'refund'; readonly paymentId: string; readonly amount?: string; readonly who: Who }
  | { readonly name: 'void'; readonly paymentId: string; readonly who: Who };

interface Who {
  readonly baseUrl?: string;
  readonly merchantKey?: string;
  readonly password?: string;
}

export function parseApiCommand(argv: readonly string[]): ApiCommand | 'help' {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const v = parsed.values;
  if (v.help) return 'help';
  const [name, ...args] = parsed.positionals as [ApiCommandName, ...string[]];
  if ((v['merchant-key'] === undefined) !== (v.password === undefined)) throw new UsageError('--merchant-key and --password go together');
  if (v['base-url'] !== undefined && !/^https?:\/\/[^\s/]+/.test(v['base-url'])) throw new UsageError(`--base-url must be an http(s) URL such as http://127.0.0.1:3000, not "${v['base-url']}"`);
  const who: Who = { baseUrl: v['base-url'], merchantKey: v['merchant-key'], password: v.password };
  if (name !== 'status' && v['order-id'] !== undefined) throw new UsageError('--order-id: only status takes it');
  const count = (min: number, max: number, usage: string) => {
    if (args.length < min || args.length > max) throw new UsageError(`${name} takes ${usage}`);
  };
  switch (name) {
    case 'sign': {
      const [message, ...values] = args;
      if (!message || !isSignedMessage(message)) throw new UsageError(`sign needs a message: ${Object.keys(SIGNED_MESSAGES).join(', ')}`);
      const fields = SIGNED_MESSAGES[message];
      if (values.length !== fields.length) throw new UsageError(`sign ${message} takes ${fields.length} value${fields.length === 1 ? '' : 's'}: ${fields.join(' ')}`);
      return { name, message, values, who };
    }
    case 'status':
      if (v['order-id'] !== undefined) {
        count(0, 0, 'a payment id or --order-id ORDER, not both');
        return { name, orderId: v['order-id'], who };
      }
      count(1, 1, 'a payment id: status PAYMENT_ID (or --order-id ORDER)');
      return { name, paymentId: args[0], who };
    case 'refund':
      count(1, 2, 'a payment id and, optionally, an amount: refund PAYMENT_ID [AMOUNT]');
      return { name, paymentId: args[0]!, ...(args[1] !== undefined ? { amount: args[1] } : {}), who };
    case 'void':
      count(1, 1, 'a payment id: void PAYMENT_ID');
      return { name, paymentId: args[0]!, who };
  }
}

/** Where the running npm start of this data directory said it answers, when it still runs. */
function runnerUrl(dataDir: string): string | undefined {
  const file = join(dataDir, RUNNER_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const runner = JSON.parse(readFileSync(file, 'utf8')) as RunnerAnnouncement;
    process.kill(runner.pid, 0);
    return runner.url;
  } catch {
    return undefined;
  }
}

interface Target {
  readonly description: string;
  readonly baseUrl: string;
  readonly merchant: MerchantCredentials;
  close(): Promise<void>;
}

function openTarget(who: Who, env: NodeJS.ProcessEnv): Target {
  const dataDir = env.DATA_DIR ? resolve(env.DATA_DIR) : dataDirectory();
  const baseUrl = (who.baseUrl ?? runnerUrl(dataDir) ?? `http://127.0.0.1:${env.PORT ?? 3000}`).replace(/\/+$/, '');
  let merchant: MerchantCredentials | undefined;
  if (who.merchantKey && who.password) merchant = { merchant_key: who.merchantKey, password: who.password };
  else if (env.DEMO_MERCHANT_KEY && env.DEMO_MERCHANT_PASSWORD) merchant = { merchant_key: env.DEMO_MERCHANT_KEY, password: env.DEMO_MERCHANT_PASSWORD };
  else {
    const file = join(dataDir, 'demo-merchant.json');
    if (!existsSync(file)) {
      throw new CommandFailure(
        `no demo merchant in ${dataDir} (${file} is written by npm start on its first run): start the runner once, run this with its DATA_DIR, ` +
          'or give --merchant-key KEY --password PASSWORD (also DEMO_MERCHANT_KEY and DEMO_MERCHANT_PASSWORD, as npm start takes them)',
      );
    }
    const saved = JSON.parse(readFileSync(file, 'utf8')) as MerchantCredentials;
    merchant = { merchant_key: saved.merchant_key, password: saved.password };
  }
  return { description: `merchant ${merchant.merchant_key} at ${baseUrl}`, baseUrl, merchant, close: async () => undefined };
}

const asJson = (value: unknown) => JSON.stringify(value, null, 2);

/** Why an answer is a refusal, in words, with what to do about the usual ones. */
function refusal(target: Target, status: number, json: Record<string, unknown>, paymentId: string | undefined, amount?: { amount: string; currency?: string }): CommandFailure {
  const errors = Array.isArray(json.errors) ? (json.errors as { error_message?: string }[]).map((e) => e.error_message).filter(Boolean) : [];
  const message = [json.error_message ?? json.message, ...errors].filter(Boolean).join(' ');
  const hints: string[] = [];
  if (json.error_code === 208001) hints.push(`payment ${paymentId} is not a payment of merchant ${target.merchant.merchant_key} at ${target.baseUrl} (another merchant's payment answers the same)`);
  if (errors.some((e) => /^hash: /.test(e ?? ''))) hints.push(`the merchant key or password is not ${target.baseUrl}'s (--merchant-key, --password)`);
  const decimals = amount?.currency && errors.some((e) => /amount: This value is not valid\.$/.test(e ?? '')) ? amountDecimalsHint(amount.amount, amount.currency, 'amount') : undefined;
  if (decimals) hints.push(decimals);
  return new CommandFailure(`${asJson(json)}\nrefused, HTTP ${status}${message ? `: ${message}` : ''}${hints.length ? `\n${hints.join('\n')}` : ''}`);
}

async function execute(command: ApiCommand, target: Target, io: Io): Promise<string> {
  if (command.name === 'sign') {
    if (command.message === 'session') {
      const hint = amountDecimalsHint(command.values[1]!, command.values[2]!);
      if (hint) io.err(`note: ${hint}`);
    }
    return signMessage(command.message, command.values, target.merchant.password);
  }
  const send = async (...args: Parameters<typeof merchantRequest> extends [unknown, unknown, ...infer R] ? R : never) => {
    try {
      return await merchantRequest(target.baseUrl, target.merchant, ...args);
    } catch (e) {
      if (e instanceof RunnerUnreachable) {
        throw new CommandFailure(`${e.message}: is npm start running? (Another address: --base-url URL, e.g. a deployed stage's ApiUrl.)`);
      }
      throw e;
    }
  };
  if (command.name === 'status') {
    const fields = command.orderId !== undefined ? { order_id: command.orderId } : { payment_id: command.paymentId! };
    const answer = await send('status', fields);
    if (answer.status !== 200) throw refusal(target, answer.status, answer.json, command.paymentId ?? `of order ${command.orderId}`);
    return asJson(answer.json);
  }
  if (command.name === 'void') {
    const answer = await send('void', { payment_id: command.paymentId });
    if (answer.status !== 200) throw refusal(target, answer.status, answer.json, command.paymentId);
    return asJson(answer.json);
  }
  // A refund: the payment's status first, for its amount (the default) and currency (the hint).
  const status = await send('status', { payment_id: command.paymentId });
  if (status.status !== 200) throw refusal(target, status.status, status.json, command.paymentId);
  const order = (status.json.order ?? {}) as { amount?: string; currency?: string };
  const amount = command.amount ?? order.amount ?? '';
  const answer = await send('refund', { payment_id: command.paymentId, amount });
  if (answer.status !== 200) throw refusal(target, answer.status, answer.json, command.paymentId, { amount, currency: order.currency });
  return asJson(answer.json);
}

/** Runs one of these commands; resolves with the exit status (0 done, 1 failed or refused, 2 bad usage). */
export function runMerchantApiCommand(argv: readonly string[], usage: string, io: Io, env: NodeJS.ProcessEnv): Promise<number> {
  return runCli<ApiCommand, Target>(
    {
      name: 'merchant',
      usage,
      parse: () => parseApiCommand(argv),
      open: async (command) => openTarget(command.who, env),
      run: (command, target) => execute(command, target, io),
      readable: (e) => e instanceof CommandFailure,
    },
    io,
  );
}
