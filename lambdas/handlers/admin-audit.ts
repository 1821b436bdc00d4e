import { operatorEndpoint } from '../middleware/operator-endpoint';
import { auditPage } from '../use-cases/admin';

/** GET /admin/api/audit?actor=&action=&target=&cursor= : the audit log, newest first, filtered. */
export const handler = operatorEndpoint(({ event, deps }) => {
  const q = event.queryStringParameters ?? {};
  return auditPage(deps, { cursor: q.cursor, actor: q.actor, action: q.action, target: q.target });
});
