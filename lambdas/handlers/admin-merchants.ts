import { operatorEndpoint } from '../middleware/operator-endpoint';
import { merchantListView } from '../protocol/admin/merchants';
import { merchantList } from '../use-cases/admin/merchants';

/** GET /admin/api/merchants */
export const handler = operatorEndpoint(async ({ deps }) => merchantListView(await merchantList(deps)));
