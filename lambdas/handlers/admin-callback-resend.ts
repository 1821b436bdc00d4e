import { withCallbacks } from '../callback-container';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { callbackResendOf } from '../protocol/admin/actions';
import { resendView } from '../protocol/admin/callbacks';
import { resendCallback } from '../use-cases/callback-log';

/**
 * POST /admin/api/payments/{paymentId}/callbacks/{index}/resend with {"contradiction_confirmed"?}:
 * sends one callback again (one that contradicts the payment's state now only when confirmed).
 */
export const handler = operatorEndpoint(
  async ({ event, deps, actor, body }) => {
    const { index, contradictionConfirmed } = callbackResendOf(event.pathParameters?.index, body);
    return resendView(await resendCallback(withCallbacks(deps), actor, event.pathParameters?.paymentId ?? '', index, { contradictionConfirmed }));
  },
  // A write: same-origin JSON only, as every operator write.
  { body: true },
);
