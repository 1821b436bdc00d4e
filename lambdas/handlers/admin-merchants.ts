import { operatorEndpoint } from '../middleware/operator-endpoint';
import { merchantList } from '../use-cases/admin';

/** GET /admin/api/merchants */
export const handler = operatorEndpoint(async ({ deps }) => ({ merchants: await merchantList(deps) }));
