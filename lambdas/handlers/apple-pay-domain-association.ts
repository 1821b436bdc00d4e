import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { applePayDeps as deps } from '../wiring/apple-pay';
import { ApiError } from '../domain/errors';
import { errorEnvelope } from '../middleware/error-envelope';
import type { LambdaHandler } from '../middleware/merchant-endpoint';
import { requestObservability } from '../middleware/observability';
import { domainAssociation } from '../use-cases/apple-pay';

/**
 * GET /.well-known/apple-developer-merchantid-domain-association: the file Apple gave for the
 * stage's domain (docs/wallets.md, "Verifying the domain"), from Secrets Manager; 404 without one.
 */
export const handler: LambdaHandler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(async () => {
  const file = await domainAssociation(deps());
  if (!file) throw new ApiError('ROUTE_NOT_FOUND');
  return { statusCode: 200, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' }, body: file };
})
  .use(requestObservability())
  .use(errorEnvelope()) as unknown as LambdaHandler;
