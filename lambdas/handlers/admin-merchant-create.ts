import { destinationPolicy } from '../config';
import { invalidRequest } from '../domain/errors';
import { jsonResponse } from '../middleware/error-envelope';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { createMerchantAudited, parseSettingsPatch } from '../use-cases/admin';
import { MerchantAdminError } from '../use-cases/manage-merchants';

/**
 * POST /admin/api/merchants with `name`, optionally `merchant_key` and any settings the settings form
 * takes: 201 with the merchant key, its signing password and its webhook secret, shown this once.
 */
export const handler = operatorEndpoint(
  async ({ deps, actor, body }) => {
    const { merchant_key: merchantKey, ...fields } = body;
    if (merchantKey !== undefined && typeof merchantKey !== 'string') throw invalidRequest([{ path: 'merchant_key', message: 'This value is not valid.' }]);
    if (typeof fields.name !== 'string' || !fields.name.trim()) throw invalidRequest([{ path: 'name', message: 'This value should not be blank.' }]);
    const parsed = parseSettingsPatch(fields, destinationPolicy(deps.config));
    if ('errors' in parsed) throw invalidRequest(parsed.errors);
    const { name, ...settings } = parsed.settings;
    try {
      return await createMerchantAudited(deps, actor, { name: (name ?? '').trim(), settings, ...(merchantKey?.trim() ? { merchantKey: merchantKey.trim() } : {}) });
    } catch (e) {
      if (e instanceof MerchantAdminError) throw invalidRequest([{ path: e.field ?? 'settings', message: e.message }]);
      throw e;
    }
  },
  { body: true, respond: (created) => jsonResponse(201, created) },
);
