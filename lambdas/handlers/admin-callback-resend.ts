import { invalidRequest } from '../domain/errors';
import { RULE } from '../domain/validation';
import { withCallbacks } from '../callback-container';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { resendCallback } from '../use-cases/callback-log';

/**
 * POST /admin/api/payments/{paymentId}/callbacks/{index}/resend with {"contradiction_confirmed"?}:
 * sends one callback again (one that contradicts the payment's state now only when confirmed).
 */
export const handler = operatorEndpoint(
  ({ event, deps, actor, body }) => {
    const raw = event.pathParameters?.index ?? '';
    const index = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(index)) throw invalidRequest([{ path: 'index', message: RULE.invalid }]);
    const confirmed = body.contradiction_confirmed;
    if (confirmed !== undefined && typeof confirmed !== 'boolean') throw invalidRequest([{ path: 'contradiction_confirmed', message: RULE.invalid }]);
    return resendCallback(withCallbacks(deps), actor, event.pathParameters?.paymentId ?? '', index, { contradictionConfirmed: confirmed === true });
  },
  // A write: same-origin JSON only, as every operator write.
  { body: true },
);
