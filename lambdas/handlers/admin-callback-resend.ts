import { invalidRequest } from '../domain/errors';
import { RULE } from '../domain/validation';
import { withCallbacks } from '../callback-container';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { resendCallback } from '../use-cases/callback-log';

/** POST /admin/api/payments/{paymentId}/callbacks/{index}/resend with {}: sends one callback again. */
export const handler = operatorEndpoint(
  ({ event, deps, actor }) => {
    const raw = event.pathParameters?.index ?? '';
    const index = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(index)) throw invalidRequest([{ path: 'index', message: RULE.invalid }]);
    return resendCallback(withCallbacks(deps), actor, event.pathParameters?.paymentId ?? '', index);
  },
  // A write: same-origin JSON only, as every operator write.
  { body: true },
);
