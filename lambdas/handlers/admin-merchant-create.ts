import { destinationPolicy } from '../config';
import { jsonResponse } from '../middleware/error-envelope';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { merchantSecretDeps } from '../wiring/secrets';
import { newMerchantOf, refusalsAsFieldErrors } from '../protocol/admin/merchants';
import { createMerchantAudited } from '../use-cases/admin/merchants';

/**
 * POST /admin/api/merchants with `name`, optionally `merchant_key` and any settings the settings form
 * takes: 201 with the merchant key, its signing password and its webhook secret, shown this once.
 */
export const handler = operatorEndpoint(
  ({ deps, actor, body }) => refusalsAsFieldErrors(createMerchantAudited(deps, actor, newMerchantOf(body, destinationPolicy(deps.config)))),
  { body: true, respond: (created) => jsonResponse(201, created), deps: merchantSecretDeps },
);
