import { invalidRequest } from '../domain/errors';
import { RULE } from '../domain/validation';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { bulkAction } from '../use-cases/admin';

/** POST /admin/api/capture-queue/bulk with {"action": "capture"|"release", "payment_ids": [...]} */
export const handler = operatorEndpoint(
  async ({ deps, actor, body }) => {
    const action = body.action;
    if (action !== 'capture' && action !== 'release') throw invalidRequest([{ path: 'action', message: RULE.choice }]);
    const ids = Array.isArray(body.payment_ids) ? body.payment_ids.filter((i): i is string => typeof i === 'string') : [];
    return { results: await bulkAction(deps, actor, action, ids) };
  },
  { body: true },
);
