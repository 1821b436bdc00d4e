import { withCallbacks } from '../callback-container';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { deadCallbackPage } from '../protocol/admin/callbacks';
import { ADMIN_LIMITS } from '../use-cases/admin/deps';
import { deadCallbacks } from '../use-cases/callback-log';

/** GET /admin/api/merchants/{merchantKey}/callbacks/dead?cursor= : the merchant's dead callbacks, oldest first. */
export const handler = operatorEndpoint(async ({ event, deps }) => {
  const merchantKey = event.pathParameters?.merchantKey ?? '';
  return deadCallbackPage(merchantKey, await deadCallbacks(withCallbacks(deps), merchantKey, ADMIN_LIMITS.pageSize, event.queryStringParameters?.cursor));
});
