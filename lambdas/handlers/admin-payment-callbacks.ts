import { withCallbacks } from '../callback-container';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { callbackView } from '../protocol/admin/callbacks';
import { callbackLog } from '../use-cases/callback-log';

/** GET /admin/api/payments/{paymentId}/callbacks: each transaction's callback and its delivery attempts. */
export const handler = operatorEndpoint(async ({ event, deps }) => ({ callbacks: (await callbackLog(withCallbacks(deps), event.pathParameters?.paymentId ?? '')).map(callbackView) }));
