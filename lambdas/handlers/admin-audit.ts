import { operatorEndpoint } from '../middleware/operator-endpoint';
import { cursorDeps } from '../wiring/cursor-key';
import { auditSearchOf } from '../protocol/admin/queries';
import { auditPage } from '../use-cases/admin/audit';

/** GET /admin/api/audit?actor=&action=&target=&from=&to=&cursor= : the audit log, newest first, filtered. */
export const handler = operatorEndpoint(({ event, deps }) => auditPage(deps, auditSearchOf(event.queryStringParameters)), { deps: cursorDeps });
