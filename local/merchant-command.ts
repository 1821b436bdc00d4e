import { localClock } from './clock';
import { changeMerchantSettings, createMerchantAudited, rotatePasswordAudited, rotateWebhookSecretAudited } from '../lambdas/use-cases/admin/merchants';
import { SETTING_OPTIONS, merchantView, settingsFromOptions } from '../lambdas/protocol/merchant-settings';
import { auditAnchorStore } from '../lambdas/adapters/audit-anchor-store';
import type { AuditAnchorStore } from '../lambdas/ports/audit-anchors';
import { dayIsWhole, verifyAnchoredDays } from '../lambdas/use-cases/audit-anchors';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readConfig } from '../lambdas/config';
import { withCallbacks, type DepsWithCallbacks } from '../lambdas/callback-container';
import { buildDeps } from '../lambdas/container';
import { CALLBACK_POLICY } from '../lambdas/domain/callback';
import type { MerchantSettings } from '../lambdas/ports/merchants';
import { DEAD_LIST_LIMIT, callbacksOf, callbacksText, deadText, listDeadCallbacks, resendAllDead, resendOne } from './merchant-callbacks';
import { MerchantAdminError, showMerchant, webhookSecretOf } from '../lambdas/use-cases/manage-merchants';
import { stageEnvironment } from './stack-outputs';
import { CommandFailure, consoleIo, runCli, stageOf, UsageError, type Io } from './cli';
import { migrateIndexKeys } from '../lambdas/adapters/dynamodb/index-migration';
import { shardCountsOf } from '../lambdas/adapters/dynamodb/keys';
import { dataDirectory, openLocalStore } from './local-store';
import { MERCHANT_API_COMMANDS, MERCHANT_API_USAGE, isMerchantApiCommand, runMerchantApiCommand } from './merchant-api-command';
import { ACCOUNT_COMMANDS, ACCOUNT_OPTIONS, ACCOUNT_USAGE, OPTIONS_SHARED_WITH_SETTINGS, accountOptionsGiven, executeAccountCommand, isAccountCommand, parseAccountCommand, type AccountCommand } from './account-command';

/**
 * The merchant admin commands behind `npm run merchant` (local/merchant-cli.ts): they create and
 * configure merchants and look after their callbacks, in the local store or in a deployed stage,
 * through the same use cases and adapters the service runs.
 */
export const USAGE = `Usage: npm run -s merchant -- <command> [options]

Commands:
  create --name NAME [settings]   Create a merchant. Prints {"merchant_key","password","webhook_secret"}.
  show KEY                        Print the merchant's settings and its webhook_secret (never the
                                  password).
  rotate-webhook-secret KEY       Issue a new webhook secret (X-Checkout-Signature); the previous one
                                  keeps signing beside it for 24 hours. Prints {"merchant_key",
                                  "webhook_secret","previous_valid_until"}.
  set KEY <settings>              Change settings. Prints the merchant's settings.
  rotate-password KEY             Issue a new signing password. Prints {"merchant_key","password"}.

${MERCHANT_API_USAGE}
Callbacks (the server-to-server notifications posted to the merchant's notification URL):
  callbacks PAYMENT_ID            Print each callback of the payment (one per transaction: its
                                  state, next attempt or when it was delivered or given up, last
                                  error) and its delivery attempts (time, HTTP status, latency,
                                  error), as tables.
  resend-callback PAYMENT_ID NO  Queue one callback (its NO. as callbacks and the portal number
                                  it, from 1) to be sent again. Prints
                                  {"payment_id","index","number","outcome"}; outcome is
                                  queued, or already-queued when it is waiting to be sent anyway.
                                  A callback the merchant is never sent, one skipped in its turn,
                                  and one that contradicts the payment's state now are refused.
  dead-callbacks KEY              List the merchant's dead callbacks (still failing ${CALLBACK_POLICY.retryForMs / 3_600_000} hours
                                  after their first attempt), oldest first, at most ${DEAD_LIST_LIMIT}.
  resend-dead KEY                 Queue all the merchant's dead callbacks to be sent again. Prints
                                  {"merchant_key","queued","more"}; more: true asks for another run.
  Resends, created merchants, settings changes and rotations are written to the audit log as
  done by cli:<your login> (a rotation records only that it happened, never the secret).

Audit log:
  verify-audit [DAY ...]          Walk each day's chain of audit entries (YYYY-MM-DD; default: the
                                  last 7 days), its link to the previous day's head, and its entries
                                  against the anchors exported to the write-once store; print
                                  {"ok","days":[{"day","entries","break"?,"anchor":{"status",...}}]}.
                                  A changed, removed or reordered entry is a break, a day rewritten
                                  whole an anchor that differs, a closed day without its anchor a
                                  missing one: exit 1. Days before the first anchor are unanchored.
  verify-audit --day DAY          The same for one day;
  verify-audit --from DAY [--to DAY]
                                  for every day of a range (to: today by default; at most 366).

${ACCOUNT_USAGE}
Table:
  migrate-indexes                 Give items of the layout before the sharded indexes their new index
                                  keys (docs/operations.md, "Migrating an existing table"); prints
                                  {"found","written","reread"}. Safe to run again and beside traffic.

Output:
  --json                          Print JSON instead of tables (callbacks, dead-callbacks); the
                                  other commands print JSON always.

Settings (a value "off" clears an optional setting):
  --name NAME                     Shown on the checkout page.
  --dms on|off                    Two-stage payments: authorize now, capture later.
  --auto-capture-delay MINUTES|off
                                  Capture authorizations automatically after MINUTES (DMS).
  --return-params on|off          Append payment_id, trans_id, order_id, hash to success_url.
  --notification-url URL|off      Where payment callbacks are posted.
  --methods card,...|off          Methods offered when a session names none (off: all).
  --max-declines N                Declines allowed on one link before cancel_url.
  --brand-color #RRGGBB|off       Primary colour of the checkout page.
  --logo-url URL|off              https URL of the logo on the checkout page.
  --frame-ancestors origin,...|off
                                  Origins allowed to frame the checkout page.
  --acquirer-account ID|off       The merchant's own acquirer account (see accounts); off: the
                                  stage's own.
  --email-receipts on|off         E-mail the customer a receipt of each paid checkout that has
                                  their e-mail (default off; the stage must send receipts).
  --wallets applepay,googlepay|off
                                  Apple Pay and Google Pay buttons on the checkout page (docs/wallets.md).
  --apple-pay-merchant-id ID|off  The merchant's Apple Pay merchant identifier (merchant.com.…);
                                  off: the stage's own. Its certificate goes to Secrets Manager.
  --google-pay-merchant-id ID|off The merchant id of Google's Pay & Wallet Console (PRODUCTION).
  --google-pay-gateway-merchant-id ID|off
                                  The merchant's id at the stage's Google Pay gateway; a merchant
                                  linked to an acquirer account uses the account's (account-set).

Target:
  (default)                       The local store in DATA_DIR (default .data): the running
                                  local runner's, or opened here when it is not running.
  --stage STAGE                   The deployed stack of STAGE (also CHECKOUT_STAGE), with the
                                  default AWS credentials and region (AWS_PROFILE, AWS_REGION).

Exit status: 0 done, 1 failed (e.g. unknown merchant or payment), 2 bad usage.
`;



const COMMANDS = ['create', 'show', 'set', 'rotate-password', 'rotate-webhook-secret', 'callbacks', 'resend-callback', 'dead-callbacks', 'resend-dead', 'verify-audit', 'migrate-indexes', ...ACCOUNT_COMMANDS] as const;
type CommandName = (typeof COMMANDS)[number];
const isCommandName = (name: string): name is CommandName => (COMMANDS as readonly string[]).includes(name);

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  stage: { type: 'string' },
  json: { type: 'boolean' },
  name: { type: 'string' },
  dms: { type: 'string' },
  'auto-capture-delay': { type: 'string' },
  'return-params': { type: 'string' },
  'notification-url': { type: 'string' },
  methods: { type: 'string' },
  'max-declines': { type: 'string' },
  'brand-color': { type: 'string' },
  'logo-url': { type: 'string' },
  'frame-ancestors': { type: 'string' },
  'acquirer-account': { type: 'string' },
  'email-receipts': { type: 'string' },
  wallets: { type: 'string' },
  'apple-pay-merchant-id': { type: 'string' },
  'google-pay-merchant-id': { type: 'string' },
  // --google-pay-gateway-merchant-id is in ACCOUNT_OPTIONS too: a merchant's setting with set, an account's field with account-set.
  ...ACCOUNT_OPTIONS,
  day: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
} as const;

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** The settings named on the command line (protocol/merchant-settings.ts); an option given as "off" clears its setting. */
function settingsFrom(values: Values): Partial<MerchantSettings> {
  const read = settingsFromOptions(values);
  if ('problem' in read) throw new UsageError(read.problem);
  return read.settings;
}

/**
 * The deployed stage's table and secrets, from its stack's outputs (local/stack-outputs.ts), reached
 * with the default AWS credential chain: no endpoints.
 */
export { stageEnvironment } from './stack-outputs';
export type { DeadCallback } from '../lambdas/protocol/admin/callbacks';

interface Target {
  readonly deps: DepsWithCallbacks;
  readonly description: string;
  /**
   * Said after "… not found" when the local store was chosen by default: a runner started with
   * another DATA_DIR keeps its merchants there, and the bare message would not say so.
   */
  readonly notFoundHint?: string;
  close(): Promise<void>;
}

async function openTarget(stage: string | undefined, env: NodeJS.ProcessEnv): Promise<Target> {
  if (stage !== undefined) {
    const environment = await stageEnvironment(stage);
    const deps = withCallbacks(buildDeps(readConfig(environment)));
    return {
      deps,
      description: `stage ${stage} (table ${environment.TABLE_NAME})`,
      close: async () => {
        deps.db.destroy();
        deps.secretsClient.destroy();
      },
    };
  }
  const dataDir = env.DATA_DIR ? resolve(env.DATA_DIR) : dataDirectory();
  const store = await openLocalStore(dataDir);
  // As the local runner: its own receiver on loopback is allowed unless ALLOW_LOOPBACK_CALLBACKS=0.
  const deps = withCallbacks(buildDeps(readConfig({ ...store.env, ALLOW_LOOPBACK_CALLBACKS: env.ALLOW_LOOPBACK_CALLBACKS ?? '1' }), localClock(env)));
  const defaulted = !env.DATA_DIR;
  return {
    deps,
    description: `local store in ${dataDir}`,
    ...(defaulted
      ? {
          notFoundHint:
            `in the data directory ${dataDir} (the default, DATA_DIR unset; ${store.runnerPid ? `the runner with pid ${store.runnerPid} uses it` : 'no runner is using it'}). ` +
            'A runner started with another DATA_DIR keeps its merchants there: run this with the same DATA_DIR (npm start prints it).',
        }
      : {}),
    close: async () => {
      deps.db.destroy();
      deps.secretsClient.destroy();
      await store.close();
    },
  };
}

export interface Command {
  readonly name: CommandName;
  /** The merchant's key, for the merchant and dead-callback commands. */
  readonly key?: string;
  readonly paymentId?: string;
  /** A callback's position in its payment's history, as `callbacks` lists it. */
  readonly index?: number;
  /** An acquirer account command (local/account-command.ts). */
  readonly account?: AccountCommand;
  /** verify-audit: the days to check. */
  readonly days?: readonly string[];
  readonly json: boolean;
  readonly settings: Partial<MerchantSettings>;
  readonly stage?: string;
}

/** A callback's number as people see it (1 = the first), to the index of the payment's sequence. */
function callbackIndex(value: string): number {
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1) throw new UsageError(`NO must be a callback's number as callbacks lists it (1, 2, …), not "${value}"`);
  return Number(value) - 1;
}

export function parseCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Command | 'help' {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const values = parsed.values as Values;
  if (values.help) return 'help';
  const [name, ...args] = parsed.positionals;
  if (!name) {
    const all = [...COMMANDS, ...MERCHANT_API_COMMANDS];
    throw new UsageError(`a command is needed: ${all.slice(0, -1).join(', ')} or ${all[all.length - 1]}`);
  }
  if (!isCommandName(name)) throw new UsageError(`unknown command "${name}"`);
  const stage = stageOf(values.stage, env);
  const given = SETTING_OPTIONS.filter((o) => values[o] !== undefined);
  const json = values.json ?? false;
  const [first, second] = args;
  if (name !== 'verify-audit') {
    const dayOptions = (['day', 'from', 'to'] as const).filter((o) => values[o] !== undefined);
    if (dayOptions.length) throw new UsageError(`${dayOptions.map((o) => `--${o}`).join(', ')}: only verify-audit takes days`);
  }
  const atMost = (count: number) => {
    if (args.length > count) throw new UsageError(`unexpected arguments: ${args.slice(count).join(' ')}`);
  };
  const noSettings = () => {
    if (given.length) throw new UsageError(`${name} takes no settings (${given.map((o) => `--${o}`).join(', ')})`);
  };
  if (isAccountCommand(name)) {
    const settingsOnly = given.filter((o) => !OPTIONS_SHARED_WITH_SETTINGS.includes(o));
    if (settingsOnly.length) throw new UsageError(`${name} takes no settings (${settingsOnly.map((o) => `--${o}`).join(', ')})`);
    return { name, account: parseAccountCommand(name, args, values, env), settings: {}, json, stage };
  }
  const accountOptions = accountOptionsGiven(values).filter((o) => !OPTIONS_SHARED_WITH_SETTINGS.includes(o));
  if (accountOptions.length) throw new UsageError(`${accountOptions.map((o) => `--${o}`).join(', ')}: only account-create and account-set take these`);
  switch (name) {
    case 'create':
      if (first) throw new UsageError('create takes no merchant key; one is generated');
      if (!values.name) throw new UsageError('create needs --name NAME');
      return { name, settings: settingsFrom(values), json, stage };
    case 'set':
      atMost(1);
      if (!first) throw new UsageError('set needs a merchant key: set KEY --option value ...');
      if (!given.length) throw new UsageError(`set needs at least one setting: ${SETTING_OPTIONS.map((o) => `--${o}`).join(', ')}`);
      return { name, key: first, settings: settingsFrom(values), json, stage };
    case 'show':
    case 'rotate-password':
    case 'rotate-webhook-secret':
    case 'dead-callbacks':
    case 'resend-dead':
      atMost(1);
      if (!first) throw new UsageError(`${name} needs a merchant key: ${name} KEY`);
      noSettings();
      return { name, key: first, settings: {}, json, stage };
    case 'callbacks':
      atMost(1);
      if (!first) throw new UsageError('callbacks needs a payment id: callbacks PAYMENT_ID');
      noSettings();
      return { name, paymentId: first, settings: {}, json, stage };
    case 'migrate-indexes':
      atMost(0);
      noSettings();
      return { name, settings: {}, json, stage };
    case 'verify-audit': {
      noSettings();
      const days = auditDays(args, values, new Date());
      return { name, days, settings: {}, json, stage };
    }
    case 'resend-callback':
      atMost(2);
      if (!first || second === undefined) throw new UsageError('resend-callback needs a payment id and a callback number: resend-callback PAYMENT_ID NO');
      noSettings();
      return { name, paymentId: first, index: callbackIndex(second), settings: {}, json, stage };
  }
}

/**
 * Who the audit log names for a resend from the CLI: the login of whoever ran it (the platform
 * team, on their own machine or a bastion), as operators are named by their user name.
 */
export function cliActor(env: NodeJS.ProcessEnv = process.env): string {
  let login: string | undefined;
  try {
    login = userInfo().username;
  } catch {
    // A uid without a passwd entry (some containers): fall back to the shell's idea of the user.
  }
  return `cli:${login || env.USER || env.USERNAME || 'unknown'}`;
}

const asJson = (value: unknown): string => JSON.stringify(value, null, 2);

/** A stage deployed before anchoring has no bucket: its days verify by their chains alone, `unanchored`. */
const NO_ANCHORS: AuditAnchorStore = { write: () => Promise.reject(new Error('no anchor store')), ofDay: async () => [], firstDay: async () => undefined };

/** Runs a parsed command; resolves with what to print. */
async function execute(command: Command, deps: DepsWithCallbacks, env: NodeJS.ProcessEnv): Promise<string> {
  const key = command.key as string;
  const paymentId = command.paymentId as string;
  switch (command.name) {
    case 'accounts':
    case 'account-create':
    case 'account-set':
      return executeAccountCommand(command.account!, deps, cliActor(env));
    case 'create': {
      const { name, ...settings } = command.settings;
      return asJson(await createMerchantAudited(deps, cliActor(env), { name: name as string, settings }));
    }
    case 'show': {
      const settings = merchantView(await showMerchant(deps, key));
      const webhookSecret = await webhookSecretOf(deps, key);
      return asJson({ ...settings, ...(webhookSecret ? { webhook_secret: webhookSecret } : {}) });
    }
    // Changes are audited like the portal's, as done by cli:<login> (credentials never in an entry).
    case 'rotate-webhook-secret': {
      await showMerchant(deps, key);
      return asJson(await rotateWebhookSecretAudited(deps, cliActor(env), key));
    }
    case 'set': {
      await showMerchant(deps, key);
      return asJson(merchantView(await changeMerchantSettings(deps, cliActor(env), key, command.settings)));
    }
    case 'rotate-password': {
      await showMerchant(deps, key);
      return asJson(await rotatePasswordAudited(deps, cliActor(env), key));
    }
    case 'callbacks': {
      const callbacks = await callbacksOf(deps, paymentId);
      return command.json ? asJson(callbacks) : callbacksText(paymentId, callbacks);
    }
    case 'resend-callback':
      return asJson(await resendOne(deps, cliActor(env), paymentId, command.index as number));
    case 'dead-callbacks': {
      // A mistyped key would otherwise read as "no dead callbacks".
      await showMerchant(deps, key);
      const listed = await listDeadCallbacks(deps, key);
      return command.json ? asJson(listed) : deadText(listed);
    }
    case 'resend-dead':
      await showMerchant(deps, key);
      return asJson(await resendAllDead(deps, cliActor(env), key));
    case 'migrate-indexes':
      return asJson(await migrateIndexKeys(deps.db, deps.config.TABLE_NAME, shardCountsOf(deps.config.TABLE_SHARDS)));
    case 'verify-audit': {
      // The chains, their links across days, and the anchors exported for them (the stage's bucket, the runner's folder).
      const anchors = deps.config.AUDIT_ANCHOR_BUCKET || deps.config.AUDIT_ANCHOR_DIR ? auditAnchorStore(deps.config) : NO_ANCHORS;
      const days = await verifyAnchoredDays({ audit: deps.audit, anchors, clock: deps.clock }, command.days ?? []);
      const ok = days.every(dayIsWhole);
      const report = asJson({ ok, days });
      const broken = days.find((d) => d.break);
      if (broken) {
        const b = broken.break!;
        throw new CommandFailure(`${report}\naudit chain broken on ${broken.day} at entry ${b.seq}: ${b.problem} (expected ${b.expected}, found ${b.found})`);
      }
      const unanchored = days.find((d) => !dayIsWhole(d));
      if (unanchored) throw new CommandFailure(`${report}\naudit anchor ${unanchored.anchor.status} on ${unanchored.day}: ${unanchored.anchor.problem}`);
      return report;
    }
  }
}

const readable = (e: unknown): e is Error => e instanceof MerchantAdminError || e instanceof CommandFailure;

/** "… not found" from the local store chosen by default says where it looked (Target.notFoundHint). */
async function withNotFoundHint(target: Target, work: Promise<string>): Promise<string> {
  try {
    return await work;
  } catch (e) {
    if (readable(e) && target.notFoundHint && / not found$/.test(e.message)) throw new CommandFailure(`${e.message} ${target.notFoundHint}`);
    throw e;
  }
}

/** Runs one command line; resolves with the exit status (0 done, 1 failed, 2 bad usage). */
export function runMerchantCommand(argv: readonly string[], io: Io = consoleIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  // sign, status, refund, void: the merchant API as the demo merchant (local/merchant-api-command.ts).
  if (isMerchantApiCommand(argv)) return runMerchantApiCommand(argv, USAGE, io, env);
  return runCli<Command, Target>(
    {
      name: 'merchant',
      usage: USAGE,
      parse: () => parseCommand(argv, env),
      open: (command) => openTarget(command.stage, env),
      run: (command, target) => withNotFoundHint(target, execute(command, target.deps, env)),
      readable,
    },
    io,
  );
}

/** The longest range verify-audit walks in one run (each day is one or more queries). */
const MAX_AUDIT_DAYS = 366;
const isDay = (d: string) => /^\d{4}-\d{2}-\d{2}$/.test(d) && !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d);

/** The days verify-audit checks: given ones, `--day`, `--from` … `--to` (to defaults to today), or the last 7. */
function auditDays(args: readonly string[], values: Values, now: Date): string[] {
  const ranged = values.from !== undefined || values.to !== undefined;
  if ([args.length > 0, values.day !== undefined, ranged].filter(Boolean).length > 1) {
    throw new UsageError('verify-audit takes days, --day, or --from/--to: one of them');
  }
  const named = values.day !== undefined ? [values.day] : [...args];
  const bad = [...named, ...(values.from !== undefined ? [values.from] : []), ...(values.to !== undefined ? [values.to] : [])].find((d) => !isDay(d));
  if (bad !== undefined) throw new UsageError(`verify-audit takes days as YYYY-MM-DD, not "${bad}"`);
  if (named.length) return named;
  if (!ranged) return lastDays(7, now);
  if (values.from === undefined) throw new UsageError('verify-audit --to needs --from');
  const from = Date.parse(`${values.from}T00:00:00Z`);
  const to = Date.parse(`${values.to ?? now.toISOString().slice(0, 10)}T00:00:00Z`);
  const count = Math.round((to - from) / 86_400_000) + 1;
  if (count < 1) throw new UsageError('verify-audit --from must not be after --to');
  if (count > MAX_AUDIT_DAYS) throw new UsageError(`verify-audit checks at most ${MAX_AUDIT_DAYS} days at once`);
  return lastDays(count, new Date(to));
}

/** The last `count` UTC days, today first. */
function lastDays(count: number, now: Date): string[] {
  return Array.from({ length: count }, (_, i) => new Date(now.getTime() - i * 86_400_000).toISOString().slice(0, 10));
}
