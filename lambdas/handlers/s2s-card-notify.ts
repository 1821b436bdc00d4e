import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import middy from '@middy/core';
import { requestObservability } from '../middleware/observability';
import { acquirerDeps as deps } from '../wiring/acquirer';
import { acceptNotification } from '../adapters/s2s-card/notifications';
import { formFields } from '../middleware/page-chain';
import type { LambdaHandler } from '../middleware/merchant-endpoint';
import { logger } from '../observability/logger';
import { QUEUES } from '../use-cases/work-queue';
import { noteDisputeNewsOf } from '../use-cases/chargebacks';

const text = (statusCode: number, body: 'OK' | 'ERROR'): APIGatewayProxyStructuredResultV2 => ({ statusCode, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, body });

/**
 * POST /acquirer/s2s-card/notify: the S2S CARD gateway's callbacks (the account's Notification URL).
 * A callback is a hint (notifications.ts): verified to belong to its order, then the payment is read
 * again from the gateway and what the gateway reports is recorded in the connector's records. The
 * answer is `OK` then, `ERROR` (400) when it is malformed, unknown, its hash is wrong or the gateway
 * does not confirm its trans_id; nothing is changed then. The payment itself is settled from the
 * records by the request still waiting for them, the page's return and the reconciler.
 */
export const handler: LambdaHandler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(async (event: APIGatewayProxyEventV2) => {
  const d = deps();
  if (!d.s2sCard) return text(404, 'ERROR');
  const form = formFields(event);
  if (!form) return text(400, 'ERROR');
  const result = await acceptNotification(d.s2sCard.connector, d.s2sCard.records, Object.fromEntries(form), d.clock.now());
  if (result.answer === 'ERROR') {
    // Never the fields themselves: they carry the card mask and the payer's data.
    logger.warn('s2s-card callback refused', { why: result.why, action: form.get('action') ?? undefined, result: form.get('result') ?? undefined });
    return text(400, 'ERROR');
  }
  // A chargeback: the payment's chargebacks are read from the gateway by the reconciler, at once.
  if (result.dispute) await noteDisputeNewsOf(d, result.paymentId);
  else if (!result.changed) logger.info('s2s-card callback confirmed nothing new', { payment_id: result.paymentId, action: form.get('action') ?? undefined, result: form.get('result') ?? undefined });
  // What the gateway confirmed reaches the payment at the reconciler's next run, not only after the
  // reconcile delay: the payment is made due now (an index attribute, nothing else).
  else await d.store.hurry(result.paymentId, QUEUES.reconcile, d.clock.now());
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
