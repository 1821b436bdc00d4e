import { invalidRequest } from '../../domain/errors';
import type { DestinationPolicy } from '../../domain/notification-url';
import type { Merchant, MerchantSettings } from '../../ports/merchants';
import type { AuditEntry } from '../../ports/operators';
import { MerchantAdminError } from '../../use-cases/manage-merchants';
import { settingsFromForm, settingsOf } from '../merchant-settings';

/** GET /admin/api/merchants: each merchant's key, settings and last change. */
export const merchantListView = (merchants: readonly Merchant[]) => ({
  merchants: merchants.map((m) => ({ merchant_key: m.merchantKey, ...settingsOf(m), updated_at: m.updatedAt })),
});

/** GET /admin/api/merchants/{merchantKey}: its settings and their audit history. */
export const merchantDetailView = ({ merchant: m, audit }: { merchant: Merchant; audit: AuditEntry[] }) => ({
  merchant_key: m.merchantKey,
  settings: settingsOf(m),
  created_at: m.createdAt,
  updated_at: m.updatedAt,
  audit,
});

/** PUT /admin/api/merchants/{merchantKey}: the settings now. */
export const merchantSettingsView = (m: Merchant) => ({ merchant_key: m.merchantKey, settings: settingsOf(m) });

/** PUT /admin/api/merchants/{merchantKey} with the settings to change. */
export function settingsPatchOf(body: Record<string, unknown>, destinations: DestinationPolicy): Partial<MerchantSettings> {
  const parsed = settingsFromForm(body, destinations);
  if ('errors' in parsed) throw invalidRequest(parsed.errors);
  return parsed.settings;
}

/** POST /admin/api/merchants with `name`, optionally `merchant_key` and any settings the settings form takes. */
export function newMerchantOf(body: Record<string, unknown>, destinations: DestinationPolicy): { name: string; merchantKey?: string; settings: Partial<MerchantSettings> } {
  const { merchant_key: merchantKey, ...fields } = body;
  if (merchantKey !== undefined && typeof merchantKey !== 'string') throw invalidRequest([{ path: 'merchant_key', message: 'This value is not valid.' }]);
  if (typeof fields.name !== 'string' || !fields.name.trim()) throw invalidRequest([{ path: 'name', message: 'This value should not be blank.' }]);
  const { name, ...settings } = settingsPatchOf(fields, destinations);
  return { name: (name ?? '').trim(), settings, ...(merchantKey?.trim() ? { merchantKey: merchantKey.trim() } : {}) };
}

/** A merchant administration refusal as the admin API answers it: on its field, else on `settings`. */
export async function refusalsAsFieldErrors<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (e) {
    if (e instanceof MerchantAdminError) throw invalidRequest([{ path: e.field ?? 'settings', message: e.message }]);
    throw e;
  }
}
