import { CLEARABLE_ACCOUNT_FIELDS, accountProblems, type AccountInput, type AcquirerAccount } from '../../domain/acquirer-account';
import { ApiError, invalidRequest } from '../../domain/errors';
import type { AccountSecrets, AcquirerAccounts } from '../../ports/acquirer-accounts';
import type { Clock } from '../../ports/clock';
import type { Ids } from '../../ports/ids';
import type { MerchantDirectory } from '../../ports/merchants';
import type { AuditLog } from '../../ports/operators';

/**
 * The merchants' acquirer accounts as admins manage them, from the portal or the CLI
 * (`cli:<login>`): created and changed without a deploy, every change audited with the account's
 * fields before and after. The password goes to the secret store only: never to the table, an
 * answer, a log line or an audit entry (which says that it was set).
 */
export interface AccountAdminDeps {
  readonly accounts: AcquirerAccounts;
  readonly accountSecrets: AccountSecrets;
  readonly merchants: MerchantDirectory;
  readonly audit: AuditLog;
  readonly clock: Clock;
  readonly ids: Ids;
  /** Locally (DYNAMODB_ENDPOINT set) a plain-HTTP gateway URL is taken: the fake gateway of the tests and the sandbox. */
  readonly config: { readonly DYNAMODB_ENDPOINT?: string };
}

export type AccountListDeps = Pick<AccountAdminDeps, 'accounts' | 'merchants'>;

/** An account with the merchants linked to it (by key). */
export interface ListedAccount {
  readonly account: AcquirerAccount;
  readonly merchants: readonly string[];
}

/** Merchants looked through for their links. */
const LINKED_MERCHANTS = 1000;

export async function accountList(deps: AccountListDeps): Promise<ListedAccount[]> {
  const [accounts, merchants] = await Promise.all([deps.accounts.list(), deps.merchants.list(LINKED_MERCHANTS)]);
  return accounts.map((account) => ({ account, merchants: merchants.filter((m) => m.acquirerAccount === account.accountId).map((m) => m.merchantKey) }));
}

const refuseProblems = (problems: readonly { path: string; message: string }[]): void => {
  if (problems.length) throw invalidRequest(problems);
};

/** The fields an audit entry shows: everything but the password (which is only said to be set). */
const shown = (a: AcquirerAccount): Record<string, unknown> => ({
  gateway_url: a.gatewayUrl,
  client_key: a.clientKey,
  ...(a.descriptor ? { descriptor: a.descriptor } : {}),
  currencies: a.currencies.join(','),
  ...(a.googlePayGateway ? { google_pay_gateway: a.googlePayGateway } : {}),
  ...(a.googlePayGatewayMerchantId ? { google_pay_gateway_merchant_id: a.googlePayGatewayMerchantId } : {}),
});

async function audit(deps: Pick<AccountAdminDeps, 'audit' | 'ids' | 'clock'>, actor: string, action: string, before: AcquirerAccount | undefined, after: AcquirerAccount, passwordSet: boolean): Promise<void> {
  await deps.audit.append({
    id: deps.ids.transId(),
    at: deps.clock.now().toISOString(),
    actor,
    action,
    target: `account:${after.accountId}`,
    targetKind: 'account',
    ...(before ? { before: shown(before) } : {}),
    after: { ...shown(after), ...(passwordSet ? { password: 'set' } : {}) },
    outcome: 'done',
  });
}

/**
 * A new account: the item (a conditional put: an existing id is refused, never overwritten), then
 * its password in the secret store, then the audit entry. Should the password fail to be stored,
 * the account exists without one (no payment goes through it: the connector refuses an account
 * without a password before sending anything) and setting the password again finishes it.
 */
export async function createAccount(deps: AccountAdminDeps, actor: string, input: AccountInput & { readonly accountId?: string }): Promise<AcquirerAccount> {
  refuseProblems(accountProblems(input, true, Boolean(deps.config.DYNAMODB_ENDPOINT)));
  const now = deps.clock.now().toISOString();
  const account: AcquirerAccount = {
    accountId: input.accountId!,
    acquirer: 's2s-card',
    gatewayUrl: input.gatewayUrl!,
    clientKey: input.clientKey!,
    ...(input.descriptor ? { descriptor: input.descriptor } : {}),
    currencies: [...input.currencies!],
    createdAt: now,
    updatedAt: now,
    passwordSetAt: now,
    ...(input.googlePayGateway ? { googlePayGateway: input.googlePayGateway } : {}),
    ...(input.googlePayGatewayMerchantId ? { googlePayGatewayMerchantId: input.googlePayGatewayMerchantId } : {}),
  };
  if (!(await deps.accounts.create(account))) throw invalidRequest([{ path: 'account_id', message: `Acquirer account ${account.accountId} already exists.` }]);
  await deps.accountSecrets.put(account.accountId, input.password!);
  await audit(deps, actor, 'account.create', undefined, account, true);
  return account;
}

/**
 * Changes an account: any of its fields, and its password (a rotation: the item records when, by a
 * write guarded by the account being as read, then the new password is stored). A change made by someone else since it was read is refused (409 is
 * not needed: the admin reads it again and resubmits). Audited with the fields before and after.
 */
export async function updateAccount(deps: AccountAdminDeps, actor: string, accountId: string, input: AccountInput): Promise<AcquirerAccount> {
  refuseProblems(accountProblems({ ...input, accountId }, false, Boolean(deps.config.DYNAMODB_ENDPOINT)));
  const before = await deps.accounts.find(accountId);
  if (!before) throw new ApiError('ACQUIRER_ACCOUNT_NOT_FOUND');
  const now = deps.clock.now().toISOString();
  const passwordSet = input.password !== undefined;
  const after: { -readonly [K in keyof AcquirerAccount]: AcquirerAccount[K] } = {
    ...before,
    ...(input.gatewayUrl !== undefined ? { gatewayUrl: input.gatewayUrl } : {}),
    ...(input.clientKey !== undefined ? { clientKey: input.clientKey } : {}),
    ...(input.currencies !== undefined ? { currencies: [...input.currencies] } : {}),
    updatedAt: now,
    ...(passwordSet ? { passwordSetAt: now } : {}),
  };
  // The optional fields: null (or "") clears one.
  for (const field of CLEARABLE_ACCOUNT_FIELDS) {
    const value = input[field];
    if (value === undefined) continue;
    if (value) after[field] = value;
    else delete after[field];
  }
  // The guarded write first: a change refused because another was taken meanwhile changes nothing,
  // the password included (no secret is ever changed without its audit entry).
  if (!(await deps.accounts.save(after, before.updatedAt))) throw invalidRequest([{ path: 'account_id', message: `Acquirer account ${accountId} was changed meanwhile: read it again.` }]);
  if (passwordSet) await deps.accountSecrets.put(accountId, input.password!);
  await audit(deps, actor, passwordSet && Object.keys(input).length === 1 ? 'account.rotate-password' : 'account.update', before, after, passwordSet);
  return after;
}
