import { destinationPolicy } from '../config';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { merchantSettingsView, refusalsAsFieldErrors, settingsPatchOf } from '../protocol/admin/merchants';
import { changeMerchantSettings } from '../use-cases/admin/merchants';

/** PUT /admin/api/merchants/{merchantKey} with the settings to change. */
export const handler = operatorEndpoint(
  async ({ event, deps, actor, body }) => {
    const patch = settingsPatchOf(body, destinationPolicy(deps.config));
    return merchantSettingsView(await refusalsAsFieldErrors(changeMerchantSettings(deps, actor, event.pathParameters?.merchantKey ?? '', patch)));
  },
  { body: true },
);
