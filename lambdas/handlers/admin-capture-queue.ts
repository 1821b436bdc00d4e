import { operatorEndpoint } from '../middleware/operator-endpoint';
import { captureQueue } from '../use-cases/admin';

/** GET /admin/api/capture-queue: pending authorizations, the soonest to expire first. */
export const handler = operatorEndpoint(async ({ deps }) => ({ payments: await captureQueue(deps) }));
