import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { storeDeps as deps } from '../wiring/stores';
import { ApiError } from '../domain/errors';
import { errorEnvelope, jsonResponse } from '../middleware/error-envelope';
import type { LambdaHandler } from '../middleware/merchant-endpoint';
import { requestObservability } from '../middleware/observability';
import { attemptState } from '../use-cases/checkout';

/**
 * GET /auth/{token}/status: `{"state":"processing"}` while the link's attempt waits for its outcome,
 * `{"state":"done"}` once it is recorded (the processing page then goes to /complete). What the
 * page polls: one read of our record of the payment, never the acquirer. A token that names no
 * link is answered 404 in the error envelope; a failure too, as JSON the page's script reads.
 */
export const handler: LambdaHandler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(async (event: APIGatewayProxyEventV2) => {
  const state = await attemptState(deps(), event.pathParameters?.token ?? '');
  if (!state) throw new ApiError('LINK_NOT_FOUND');
  return jsonResponse(200, { state });
})
  .use(requestObservability())
  .use(errorEnvelope()) as unknown as LambdaHandler;
