import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { JSON_HEADERS } from '../../middleware/error-envelope';

/**
 * An export's answer (text/csv as a download named `filename`): the payments', the audit log's and
 * the chargebacks' exports. `X-Export-Rows` counts the part's rows; `X-Next-Cursor`, when there is
 * one, names the next part, asked for with `cursor` set to it until an answer carries none.
 */
export const csvResponse = (filename: string, part: { readonly csv: string; readonly rows: number; readonly cursor?: string }): APIGatewayProxyStructuredResultV2 => ({
  statusCode: 200,
  headers: {
    ...JSON_HEADERS,
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': `attachment; filename="${filename}"`,
    'x-export-rows': String(part.rows),
    ...(part.cursor ? { 'x-next-cursor': part.cursor } : {}),
  },
  body: part.csv,
});
