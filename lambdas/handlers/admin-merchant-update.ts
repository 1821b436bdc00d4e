import { destinationPolicy } from '../config';
import { invalidRequest } from '../domain/errors';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { changeMerchantSettings, parseSettingsPatch } from '../use-cases/admin';

/** PUT /admin/api/merchants/{merchantKey} with the settings to change. */
export const handler = operatorEndpoint(
  ({ event, deps, actor, body }) => {
    const patch = parseSettingsPatch(body, destinationPolicy(deps.config));
    if ('errors' in patch) throw invalidRequest(patch.errors);
    return changeMerchantSettings(deps, actor, event.pathParameters?.merchantKey ?? '', patch.settings);
  },
  { body: true },
);
