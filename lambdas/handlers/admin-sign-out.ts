import { operatorEndpoint } from '../middleware/operator-endpoint';
import { signOutOperator } from '../use-cases/operator-sign-in';

/** POST /admin/api/sign-out: the portal's "Sign out", written to the audit log with the operator's role. */
export const handler = operatorEndpoint(({ deps, actor }) => signOutOperator(deps, actor), { body: true });
