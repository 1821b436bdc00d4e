import { ApiError } from '../../domain/errors';
import type { Merchant, MerchantSettings } from '../../ports/merchants';
import type { AuditEntry } from '../../ports/operators';
import {
  createMerchant,
  rotatePassword,
  rotateWebhookSecret,
  updateMerchantSettings,
  type ManageMerchantsDeps,
  type MerchantCredentials,
} from '../manage-merchants';
import { settingsOf } from '../../protocol/merchant-settings';
import type { AdminReadDeps } from './deps';

/**
 * Merchants as operators manage them, from the portal (an admin) or the CLI (`cli:<login>`): every
 * change audited with the settings before and after; credentials are never in an entry.
 */

export function merchantList(deps: AdminReadDeps): Promise<Merchant[]> {
  return deps.merchants.list(200);
}

export async function merchantDetail(deps: AdminReadDeps, merchantKey: string): Promise<{ merchant: Merchant; audit: AuditEntry[] }> {
  const merchant = await deps.merchants.find(merchantKey);
  if (!merchant) throw new ApiError('MERCHANT_NOT_FOUND');
  return { merchant, audit: await deps.audit.forTarget(`merchant:${merchantKey}`, 50) };
}

type MerchantAdminDeps = ManageMerchantsDeps & Pick<AdminReadDeps, 'audit' | 'ids'>;

/** The merchant, or MERCHANT_NOT_FOUND. */
async function merchantOf(deps: Pick<AdminReadDeps, 'merchants'>, merchantKey: string): Promise<Merchant> {
  const merchant = await deps.merchants.find(merchantKey);
  if (!merchant) throw new ApiError('MERCHANT_NOT_FOUND');
  return merchant;
}

/**
 * Changes a merchant's settings (the settings rule checks them again), audited before/after.
 * Refusals of the settings are MerchantAdminErrors.
 */
export async function changeMerchantSettings(deps: Omit<MerchantAdminDeps, 'secrets'>, actor: string, merchantKey: string, patch: Partial<MerchantSettings>): Promise<Merchant> {
  const before = await merchantOf(deps, merchantKey);
  const after = await updateMerchantSettings(deps, merchantKey, patch);
  await auditMerchantChange(deps, actor, 'merchant.settings', before, after);
  return after;
}

/**
 * A new merchant: its settings in the table (a conditional put: an existing key is refused, never
 * overwritten), its signing password and webhook secret in the secret store, and an audit entry
 * without them. The credentials are in the answer only; whoever created the merchant hands them
 * over. Refusals are MerchantAdminErrors.
 */
export async function createMerchantAudited(
  deps: MerchantAdminDeps,
  actor: string,
  input: { name: string; merchantKey?: string; settings?: Partial<MerchantSettings> },
): Promise<MerchantCredentials> {
  const created = await createMerchant(deps, input);
  const merchant = await deps.merchants.find(created.merchant_key);
  if (merchant) await auditMerchantChange(deps, actor, 'merchant.create', undefined, merchant);
  return created;
}

/** A new signing password for a merchant, audited (the entry says only that it was rotated). */
export async function rotatePasswordAudited(deps: MerchantAdminDeps, actor: string, merchantKey: string): Promise<MerchantCredentials> {
  const merchant = await merchantOf(deps, merchantKey);
  const rotated = await rotatePassword(deps, merchantKey);
  await auditMerchantChange(deps, actor, 'merchant.rotate-password', undefined, merchant);
  return rotated;
}

/** A new webhook secret (the previous one signs beside it for a day), audited without either. */
export async function rotateWebhookSecretAudited(deps: MerchantAdminDeps, actor: string, merchantKey: string): Promise<Awaited<ReturnType<typeof rotateWebhookSecret>>> {
  const merchant = await merchantOf(deps, merchantKey);
  const rotated = await rotateWebhookSecret(deps, merchantKey);
  await auditMerchantChange(deps, actor, 'merchant.rotate-webhook-secret', undefined, merchant);
  return rotated;
}

/** One audit entry for a change of a merchant: its settings before and after, or only that a credential was rotated. */
async function auditMerchantChange(
  deps: Pick<AdminReadDeps, 'audit' | 'ids' | 'clock'>,
  actor: string,
  action: 'merchant.settings' | 'merchant.create' | 'merchant.rotate-password' | 'merchant.rotate-webhook-secret',
  before: Merchant | undefined,
  after: Merchant,
): Promise<void> {
  await deps.audit.append({
    id: deps.ids.transId(),
    at: deps.clock.now().toISOString(),
    actor,
    action,
    target: `merchant:${after.merchantKey}`,
    targetKind: 'merchant',
    ...(before ? { before: settingsOf(before) } : {}),
    after: action === 'merchant.settings' || action === 'merchant.create' ? settingsOf(after) : { rotated: action === 'merchant.rotate-password' ? 'password' : 'webhook secret' },
    outcome: 'done',
  });
}
