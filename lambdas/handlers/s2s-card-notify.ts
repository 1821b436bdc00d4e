import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import middy from '@middy/core';
import { requestObservability } from '../middleware/observability';
import { deps } from '../container';
import { acceptNotification } from '../adapters/s2s-card/notifications';
import { formFields } from '../middleware/page-chain';
import type { LambdaHandler } from '../middleware/merchant-endpoint';
import { logger } from '../observability/logger';

const text = (statusCode: number, body: 'OK' | 'ERROR'): APIGatewayProxyStructuredResultV2 => ({ statusCode, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, body });

/**
 * POST /acquirer/s2s-card/notify: the S2S CARD gateway's callbacks (the account's Notification URL).
 * The answer is the body `OK` once the callback is verified and recorded, `ERROR` (400) when it is
 * malformed, unknown or its hash is wrong; nothing is changed then. It only records the answer in the
 * connector's records and answers at once (the gateway blocks a URL that times out); the payment is
 * settled from them by the page's return and by the reconciler.
 */
export const handler: LambdaHandler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(async (event: APIGatewayProxyEventV2) => {
  const d = deps();
  if (!d.s2sCard) return text(404, 'ERROR');
  const form = formFields(event);
  if (!form) return text(400, 'ERROR');
  const { password } = await d.s2sCard.settings.credentials();
  const result = await acceptNotification(d.s2sCard.records, password, Object.fromEntries(form));
  if (result.answer === 'ERROR') {
    // Never the fields themselves: they carry the card mask and the payer's data.
    logger.warn('s2s-card callback refused', { why: result.why, action: form.get('action') ?? undefined });
    return text(400, 'ERROR');
  }
  return text(200, 'OK');
})
  .use(requestObservability())
  .use({
    onError: async (request) => {
      logger.error('s2s-card callback failed', { errorName: (request.error as Error | undefined)?.name });
      // The gateway retries nothing it was told OK; ERROR leaves the reconciler to find the answer.
      request.response = text(500, 'ERROR');
    },
  }) as unknown as LambdaHandler;
