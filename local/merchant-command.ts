import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readConfig } from '../lambdas/config';
import { buildDeps, type Deps } from '../lambdas/container';
import type { Merchant, MerchantSettings } from '../lambdas/ports/merchants';
import {
  MerchantAdminError,
  createMerchant,
  rotatePassword,
  settingsProblems,
  showMerchant,
  updateMerchantSettings,
} from '../lambdas/use-cases/manage-merchants';
import { merchantSecretPrefix, tableName } from '../lib/naming';
import { dataDirectory, openLocalStore } from './local-store';

/**
 * The merchant admin commands behind `npm run merchant` (local/merchant-cli.ts): they create and
 * configure merchants, in the local store or in a deployed stage, through the same use cases and
 * adapters the service runs.
 */
export const USAGE = `Usage: npm run -s merchant -- <command> [options]

Commands:
  create --name NAME [settings]   Create a merchant. Prints {"merchant_key","password"}.
  show KEY                        Print the merchant's settings (never the password).
  set KEY <settings>              Change settings. Prints the merchant's settings.
  rotate-password KEY             Issue a new signing password. Prints {"merchant_key","password"}.

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

Target:
  (default)                       The local store in DATA_DIR (default .data): the running
                                  local runner's, or opened here when it is not running.
  --stage STAGE                   The deployed stack of STAGE (also CHECKOUT_STAGE), with the
                                  default AWS credentials and region (AWS_PROFILE, AWS_REGION).

Exit status: 0 done, 1 failed (e.g. unknown merchant), 2 bad usage.
`;

export class UsageError extends Error {}

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  stage: { type: 'string' },
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
} as const;

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

const SETTING_OPTIONS = ['name', 'dms', 'auto-capture-delay', 'return-params', 'notification-url', 'methods', 'max-declines', 'brand-color', 'logo-url', 'frame-ancestors'] as const;

const STAGE_NAME = /^[a-z][a-z0-9-]{0,29}$/;

function onOff(option: string, value: string): boolean {
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new UsageError(`--${option} must be on or off, not "${value}"`);
}

function wholeNumber(option: string, value: string): number {
  if (!/^\d{1,6}$/.test(value)) throw new UsageError(`--${option} must be a whole number, not "${value}"`);
  return Number(value);
}

const orOff = <T>(value: string, read: (v: string) => T): T | undefined => (value === 'off' ? undefined : read(value));

const list = (value: string): string[] => value.split(',').map((s) => s.trim());

/** The settings named on the command line; an option given as "off" clears its setting. */
function settingsFrom(values: Values): Partial<MerchantSettings> {
  const patch: { -readonly [K in keyof MerchantSettings]?: MerchantSettings[K] } = {};
  const branding: { primaryColor?: string; logoUrl?: string } = {};
  let brandingGiven = false;
  for (const option of SETTING_OPTIONS) {
    const value = values[option];
    if (value === undefined) continue;
    switch (option) {
      case 'name':
        patch.name = value;
        break;
      case 'dms':
        patch.dms = onOff(option, value);
        break;
      case 'return-params':
        patch.returnParams = onOff(option, value);
        break;
      case 'auto-capture-delay':
        patch.autoCaptureDelayMinutes = orOff(value, (v) => wholeNumber(option, v));
        break;
      case 'notification-url':
        patch.notificationUrl = orOff(value, (v) => v);
        break;
      case 'methods':
        patch.methods = orOff(value, list);
        break;
      case 'max-declines':
        patch.maxDeclines = wholeNumber(option, value);
        break;
      case 'brand-color':
        branding.primaryColor = orOff(value, (v) => v);
        brandingGiven = true;
        break;
      case 'logo-url':
        branding.logoUrl = orOff(value, (v) => v);
        brandingGiven = true;
        break;
      case 'frame-ancestors':
        patch.frameAncestors = orOff(value, list);
        break;
    }
  }
  if (brandingGiven) patch.branding = branding;
  const problems = settingsProblems(patch);
  if (problems.length) throw new UsageError(problems.join('; '));
  return patch;
}

/**
 * What `show` and `set` print: the settings, by name, so nothing else stored can leak out. Typed
 * so that a new setting fails to compile here until it is listed.
 */
function settingsView(m: Merchant): Record<string, unknown> {
  const view: Record<keyof Merchant, unknown> = {
    merchantKey: m.merchantKey,
    name: m.name,
    dms: m.dms,
    autoCaptureDelayMinutes: m.autoCaptureDelayMinutes,
    returnParams: m.returnParams,
    notificationUrl: m.notificationUrl,
    methods: m.methods,
    maxDeclines: m.maxDeclines,
    branding: m.branding,
    preRouting: m.preRouting,
    frameAncestors: m.frameAncestors,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
  };
  return Object.fromEntries(Object.entries(view).filter(([, v]) => v !== undefined));
}

/** The deployed stage's table and secrets, reached with the default AWS credential chain: no endpoints. */
export const stageEnvironment = (stage: string): Record<string, string> => ({
  TABLE_NAME: tableName(stage),
  MERCHANT_SECRET_PREFIX: merchantSecretPrefix(stage),
  STAGE: stage,
});

interface Target {
  readonly deps: Deps;
  readonly description: string;
  close(): Promise<void>;
}

async function openTarget(stage: string | undefined, env: NodeJS.ProcessEnv): Promise<Target> {
  if (stage !== undefined) {
    const deps = buildDeps(readConfig(stageEnvironment(stage)));
    return {
      deps,
      description: `stage ${stage} (table ${tableName(stage)})`,
      close: async () => {
        deps.db.destroy();
        deps.secretsClient.destroy();
      },
    };
  }
  const dataDir = env.DATA_DIR ? resolve(env.DATA_DIR) : dataDirectory();
  const store = await openLocalStore(dataDir);
  const deps = buildDeps(readConfig(store.env));
  return {
    deps,
    description: `local store in ${dataDir}`,
    close: async () => {
      deps.db.destroy();
      deps.secretsClient.destroy();
      await store.close();
    },
  };
}

export interface Command {
  readonly name: string;
  readonly key?: string;
  readonly settings: Partial<MerchantSettings>;
  readonly stage?: string;
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
  const [name, key, ...extra] = parsed.positionals;
  if (!name) throw new UsageError('a command is needed: create, show, set or rotate-password');
  if (extra.length) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
  const stage = values.stage ?? (env.CHECKOUT_STAGE || undefined);
  if (stage !== undefined && !STAGE_NAME.test(stage)) throw new UsageError(`--stage must be a stage name like dev or prod, not "${stage}"`);
  const given = SETTING_OPTIONS.filter((o) => values[o] !== undefined);
  switch (name) {
    case 'create':
      if (key) throw new UsageError('create takes no merchant key; one is generated');
      if (!values.name) throw new UsageError('create needs --name NAME');
      return { name, settings: settingsFrom(values), stage };
    case 'set':
      if (!key) throw new UsageError('set needs a merchant key: set KEY --option value ...');
      if (!given.length) throw new UsageError(`set needs at least one setting: ${SETTING_OPTIONS.map((o) => `--${o}`).join(', ')}`);
      return { name, key, settings: settingsFrom(values), stage };
    case 'show':
    case 'rotate-password':
      if (!key) throw new UsageError(`${name} needs a merchant key: ${name} KEY`);
      if (given.length) throw new UsageError(`${name} takes no settings (${given.map((o) => `--${o}`).join(', ')})`);
      return { name, key, settings: {}, stage };
    default:
      throw new UsageError(`unknown command "${name}"`);
  }
}

async function execute(command: Command, deps: Deps): Promise<unknown> {
  const key = command.key as string;
  switch (command.name) {
    case 'create': {
      const { name, ...settings } = command.settings;
      return createMerchant(deps, { name: name as string, settings });
    }
    case 'show':
      return settingsView(await showMerchant(deps, key));
    case 'set':
      return settingsView(await updateMerchantSettings(deps, key, command.settings));
    case 'rotate-password':
      return rotatePassword(deps, key);
    default:
      throw new UsageError(`unknown command "${command.name}"`);
  }
}

/** AWS failures an operator can act on, in words. */
function explain(e: Error, target: string): string {
  if (e.name === 'ResourceNotFoundException') return `${target}: not found (is the stage deployed in this account and region?): ${e.message}`;
  if (e.name === 'CredentialsProviderError') return `no AWS credentials found (set AWS_PROFILE or log in): ${e.message}`;
  if (/Region is missing/i.test(e.message)) return 'no AWS region configured (set AWS_REGION or AWS_PROFILE)';
  return `${target}: ${e.name}: ${e.message}`;
}

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

const consoleIo: Io = { out: (t) => console.log(t), err: (t) => console.error(t) };

/** Runs one command line; resolves with the exit status (0 done, 1 failed, 2 bad usage). */
export async function runMerchantCommand(argv: readonly string[], io: Io = consoleIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let command: Command | 'help';
  try {
    command = parseCommand(argv, env);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(`merchant: ${e.message}\nRun with --help for usage.`);
    return 2;
  }
  if (command === 'help') {
    io.out(USAGE);
    return 0;
  }
  let target: Target | undefined;
  try {
    target = await openTarget(command.stage, env);
    const out = await execute(command, target.deps);
    io.out(JSON.stringify(out, null, 2));
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`merchant: ${e.message}\nRun with --help for usage.`);
      return 2;
    }
    io.err(`merchant: ${e instanceof MerchantAdminError ? e.message : explain(e as Error, target?.description ?? 'target')}`);
    return 1;
  } finally {
    await target?.close();
  }
}
