import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../ports/clock';
import { DEFAULT_SETTINGS, type Merchant, type MerchantDirectory, type MerchantSecrets, type MerchantSettings } from '../ports/merchants';
import { MERCHANT_KEY_PATTERN } from '../adapters/secrets-manager/merchant-secrets';

export interface ManageMerchantsDeps {
  readonly merchants: MerchantDirectory;
  readonly secrets: MerchantSecrets;
  readonly clock: Clock;
}

export interface MerchantCredentials {
  readonly merchant_key: string;
  readonly password: string;
}

export class MerchantAdminError extends Error {
  override readonly name = 'MerchantAdminError';
}

export const generatePassword = (): string => randomBytes(16).toString('hex');

/** Creates a merchant: settings in the table, signing password in the secret store. */
export async function createMerchant(
  deps: ManageMerchantsDeps,
  input: { name: string; merchantKey?: string; password?: string; settings?: Partial<MerchantSettings> },
): Promise<MerchantCredentials> {
  const merchantKey = input.merchantKey ?? randomUUID();
  if (!MERCHANT_KEY_PATTERN.test(merchantKey)) throw new MerchantAdminError('merchant key must be 1-64 letters, digits or hyphens');
  const password = input.password ?? generatePassword();
  if (password.length < 16) throw new MerchantAdminError('password must have at least 16 characters');
  const now = deps.clock.now().toISOString();
  const merchant: Merchant = { ...DEFAULT_SETTINGS, ...input.settings, name: input.name, merchantKey, createdAt: now, updatedAt: now };
  if (!(await deps.merchants.create(merchant))) throw new MerchantAdminError(`merchant ${merchantKey} already exists`);
  await deps.secrets.put(merchantKey, password);
  return { merchant_key: merchantKey, password };
}

export async function showMerchant(deps: ManageMerchantsDeps, merchantKey: string): Promise<Merchant> {
  const merchant = await deps.merchants.find(merchantKey);
  if (!merchant) throw new MerchantAdminError(`merchant ${merchantKey} not found`);
  return merchant;
}

export async function updateMerchantSettings(
  deps: ManageMerchantsDeps,
  merchantKey: string,
  patch: Partial<MerchantSettings>,
): Promise<Merchant> {
  const current = await showMerchant(deps, merchantKey);
  const next: Merchant = { ...current, ...patch, merchantKey, updatedAt: deps.clock.now().toISOString() };
  for (const k of Object.keys(next) as (keyof Merchant)[]) if (next[k] === undefined) delete (next as Partial<Merchant>)[k];
  await deps.merchants.save(next);
  return next;
}

/** A new signing password; warm Lambdas pick it up when their secret cache expires. */
export async function rotatePassword(deps: ManageMerchantsDeps, merchantKey: string): Promise<MerchantCredentials> {
  await showMerchant(deps, merchantKey);
  const password = generatePassword();
  await deps.secrets.put(merchantKey, password);
  return { merchant_key: merchantKey, password };
}
