import { accountInputOf, accountListView, accountView } from '../lambdas/protocol/admin/acquirer-accounts';
import { accountList, createAccount, updateAccount, type AccountAdminDeps } from '../lambdas/use-cases/admin/acquirer-accounts';
import { ApiError } from '../lambdas/domain/errors';
import { CommandFailure, UsageError } from './cli';

/**
 * The acquirer account commands of `npm run merchant` (docs/acquirer-accounts.md): list, create,
 * change and rotate the merchants' own accounts, through the use cases the portal calls, audited as
 * `cli:<login>`. A password is read from ACQUIRER_ACCOUNT_PASSWORD, never from the command line
 * (which the process list and the shell's history show).
 */
export const ACCOUNT_USAGE = `Acquirer accounts (a merchant's own account at the S2S CARD gateway; link one with set KEY --acquirer-account ID):
  accounts                        List the accounts (never a password) and the merchants linked to each.
  account-create ID --gateway-url URL --client-key KEY --currencies EUR,USD [--descriptor TEXT]
                 [--google-pay-gateway ID --google-pay-gateway-merchant-id ID]
                                  Create an account; its password from ACQUIRER_ACCOUNT_PASSWORD.
  account-set ID [--gateway-url URL] [--client-key KEY] [--currencies ...] [--descriptor TEXT|off]
                 [--google-pay-gateway ID|off] [--google-pay-gateway-merchant-id ID|off]
                 [--rotate-password]
                                  Change an account; --rotate-password sets the password to
                                  ACQUIRER_ACCOUNT_PASSWORD. Prints the account.
  Google Pay on the page of a merchant linked to an account takes the account's gateway (its id at
  Google Pay) and gateway merchant id (the account's id at that gateway); without both, no Google Pay.
`;

export const ACCOUNT_COMMANDS = ['accounts', 'account-create', 'account-set'] as const;
export type AccountCommandName = (typeof ACCOUNT_COMMANDS)[number];
export const isAccountCommand = (name: string): name is AccountCommandName => (ACCOUNT_COMMANDS as readonly string[]).includes(name);

export const ACCOUNT_OPTIONS = {
  'gateway-url': { type: 'string' },
  'client-key': { type: 'string' },
  currencies: { type: 'string' },
  descriptor: { type: 'string' },
  'google-pay-gateway': { type: 'string' },
  // Also a merchant setting (set KEY): the same id, for a merchant on the stage's own account.
  'google-pay-gateway-merchant-id': { type: 'string' },
  'rotate-password': { type: 'boolean' },
} as const;

/** The account options a merchant's settings have too (SETTING_OPTIONS): given to `set`, they are the merchant's. */
export const OPTIONS_SHARED_WITH_SETTINGS: readonly string[] = ['google-pay-gateway-merchant-id'];

type AccountValues = { readonly [K in keyof typeof ACCOUNT_OPTIONS]?: (typeof ACCOUNT_OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

export interface AccountCommand {
  readonly name: AccountCommandName;
  readonly accountId?: string;
  /** The fields as the admin API takes them (snake_case), the password included when one is set. */
  readonly fields: Record<string, unknown>;
}

/** The account options given on a command line that is not an account command: refused, never ignored. */
export const accountOptionsGiven = (values: AccountValues): string[] => Object.keys(ACCOUNT_OPTIONS).filter((o) => values[o as keyof AccountValues] !== undefined);

export function parseAccountCommand(name: AccountCommandName, args: readonly string[], values: AccountValues, env: NodeJS.ProcessEnv): AccountCommand {
  const [id, ...rest] = args;
  if (rest.length) throw new UsageError(`unexpected arguments: ${rest.join(' ')}`);
  if (name === 'accounts') {
    if (id !== undefined || accountOptionsGiven(values).length) throw new UsageError('accounts takes no arguments or options');
    return { name, fields: {} };
  }
  if (!id) throw new UsageError(`${name} needs an account id: ${name} ID ...`);
  const fields: Record<string, unknown> = {};
  if (values['gateway-url'] !== undefined) fields.gateway_url = values['gateway-url'];
  if (values['client-key'] !== undefined) fields.client_key = values['client-key'];
  if (values.currencies !== undefined) fields.currencies = values.currencies;
  if (values.descriptor !== undefined) fields.descriptor = values.descriptor === 'off' ? null : values.descriptor;
  if (values['google-pay-gateway'] !== undefined) fields.google_pay_gateway = values['google-pay-gateway'] === 'off' ? null : values['google-pay-gateway'];
  if (values['google-pay-gateway-merchant-id'] !== undefined) {
    fields.google_pay_gateway_merchant_id = values['google-pay-gateway-merchant-id'] === 'off' ? null : values['google-pay-gateway-merchant-id'];
  }
  const password = env.ACQUIRER_ACCOUNT_PASSWORD;
  if (name === 'account-create') {
    if (values['rotate-password']) throw new UsageError('account-create takes its password from ACQUIRER_ACCOUNT_PASSWORD (no --rotate-password)');
    if (!password) throw new UsageError('account-create needs the account\'s password in ACQUIRER_ACCOUNT_PASSWORD');
    return { name, accountId: id, fields: { account_id: id, ...fields, password } };
  }
  if (values['rotate-password']) {
    if (!password) throw new UsageError('--rotate-password needs the new password in ACQUIRER_ACCOUNT_PASSWORD');
    fields.password = password;
  }
  if (!Object.keys(fields).length) {
    throw new UsageError('account-set needs at least one of --gateway-url, --client-key, --currencies, --descriptor, --google-pay-gateway, --google-pay-gateway-merchant-id, --rotate-password');
  }
  return { name, accountId: id, fields };
}

const asJson = (value: unknown): string => JSON.stringify(value, null, 2);

/** A refusal of the use case (a field, an unknown account) as the CLI reports it: one line per problem. */
async function readably<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof ApiError) throw new CommandFailure(e.fieldErrors.length ? e.fieldErrors.map((f) => `${f.path}: ${f.message}`).join('\n') : e.message);
    throw e;
  }
}

export async function executeAccountCommand(command: AccountCommand, deps: AccountAdminDeps, actor: string): Promise<string> {
  switch (command.name) {
    case 'accounts':
      return asJson(accountListView(await accountList(deps)));
    case 'account-create':
      return asJson(accountView(await readably(() => createAccount(deps, actor, accountInputOf(command.fields, true)))));
    case 'account-set':
      return asJson(accountView(await readably(() => updateAccount(deps, actor, command.accountId!, accountInputOf(command.fields, false)))));
  }
}
