import { jsonResponse } from '../middleware/error-envelope';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { accountAdminDeps } from '../wiring/accounts';
import { accountInputOf, accountView } from '../protocol/admin/acquirer-accounts';
import { createAccount } from '../use-cases/admin/acquirer-accounts';

/** POST /admin/api/acquirer-accounts with account_id, gateway_url, client_key, password, currencies, descriptor: 201 with the account (no password). */
export const handler = operatorEndpoint(async ({ deps, actor, body }) => accountView(await createAccount(deps, actor, accountInputOf(body, true))), {
  body: true,
  respond: (created) => jsonResponse(201, created),
  deps: accountAdminDeps,
});
