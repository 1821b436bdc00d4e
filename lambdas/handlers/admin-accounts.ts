import { operatorEndpoint } from '../middleware/operator-endpoint';
import { accountListView } from '../protocol/admin/acquirer-accounts';
import { accountList } from '../use-cases/admin/acquirer-accounts';

/** GET /admin/api/acquirer-accounts: every account (no password), with the merchants linked to each. */
export const handler = operatorEndpoint(async ({ deps }) => accountListView(await accountList(deps)));
