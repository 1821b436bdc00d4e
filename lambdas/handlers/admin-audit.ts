import { operatorEndpoint } from '../middleware/operator-endpoint';
import { auditPage } from '../use-cases/admin';

/** GET /admin/api/audit?cursor= : the audit log, newest first. */
export const handler = operatorEndpoint(({ event, deps }) => auditPage(deps, event.queryStringParameters?.cursor));
