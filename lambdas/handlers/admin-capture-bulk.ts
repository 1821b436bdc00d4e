import { invalidRequest } from '../domain/errors';
import { RULE } from '../domain/validation';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { bulkAction, bulkDeadlineOf } from '../use-cases/admin';

/**
 * POST /admin/api/capture-queue/bulk with {"action": "capture"|"release", "payment_ids": [...],
 * "amounts"?: {"<payment id>": "1.00"}}: a capture takes each payment's amount from `amounts`.
 */
export const handler = operatorEndpoint(
  async ({ deps, actor, body, deadline }) => {
    const action = body.action;
    if (action !== 'capture' && action !== 'release') throw invalidRequest([{ path: 'action', message: RULE.choice }]);
    const ids = Array.isArray(body.payment_ids) ? body.payment_ids.filter((i): i is string => typeof i === 'string') : [];
    const amounts = body.amounts ?? {};
    if (typeof amounts !== 'object' || Array.isArray(amounts) || amounts === null || Object.values(amounts).some((a) => typeof a !== 'string')) {
      throw invalidRequest([{ path: 'amounts', message: 'Give an object of payment id to amount, e.g. {"<payment id>": "1.00"}.' }]);
    }
    // Payments are started only while the function's time allows (its Lambda context), the rest answered "not started".
    return { results: await bulkAction(deps, actor, action, ids, amounts as Record<string, string>, bulkDeadlineOf(deadline)) };
  },
  { body: true },
);
