import { operatorEndpoint } from '../middleware/operator-endpoint';
import { accountAdminDeps } from '../wiring/accounts';
import { accountInputOf, accountView } from '../protocol/admin/acquirer-accounts';
import { updateAccount } from '../use-cases/admin/acquirer-accounts';

/** PUT /admin/api/acquirer-accounts/{accountId} with the fields to change; a `password` rotates it. */
export const handler = operatorEndpoint(
  async ({ event, deps, actor, body }) => accountView(await updateAccount(deps, actor, event.pathParameters?.accountId ?? '', accountInputOf(body, false))),
  { body: true, deps: accountAdminDeps },
);
