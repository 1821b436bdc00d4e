import { operatorEndpoint } from '../middleware/operator-endpoint';
import { csvResponse } from '../protocol/admin/csv-response';
import { cursorDeps } from '../wiring/cursor-key';
import { auditCsvPart } from '../protocol/admin/audit-csv';
import { auditSearchOf } from '../protocol/admin/queries';
import { exportAuditPart } from '../use-cases/admin/audit';

/**
 * GET /admin/api/audit/export with the log's filters (actor, action, target, from, to): one part of
 * the CSV file (text/csv). `X-Next-Cursor` names the next part, asked for with `cursor` set to it,
 * until an answer carries none; the parts joined in order are the whole file.
 */
export const handler = operatorEndpoint(
  async ({ event, deps }) => {
    const search = auditSearchOf(event.queryStringParameters);
    const part = await exportAuditPart(deps, search);
    return { csv: auditCsvPart(part.entries, !search.cursor), rows: part.entries.length, cursor: part.cursor };
  },
  {
    deps: cursorDeps,
    respond: (part) => csvResponse('audit.csv', part),
  },
);
