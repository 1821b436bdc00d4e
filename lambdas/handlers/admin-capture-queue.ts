import { operatorEndpoint } from '../middleware/operator-endpoint';
import { paymentList } from '../protocol/admin/payment-view';
import { captureQueue } from '../use-cases/admin/payment-reads';

/** GET /admin/api/capture-queue: pending authorizations, the soonest to expire first. */
export const handler = operatorEndpoint(async ({ deps }) => paymentList(await captureQueue(deps)));
