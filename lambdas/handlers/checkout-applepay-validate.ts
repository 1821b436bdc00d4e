import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { applePayDeps as deps } from '../wiring/apple-pay';
import { ApiError } from '../domain/errors';
import { errorEnvelope, jsonResponse } from '../middleware/error-envelope';
import type { LambdaHandler } from '../middleware/merchant-endpoint';
import { requestObservability } from '../middleware/observability';
import { publicBaseUrl } from '../middleware/base-url';
import { pageWalletsOf } from '../checkout-page/wallets';
import { validateApplePayMerchant } from '../use-cases/apple-pay';

/** The page sends `{"validation_url"}`: a few hundred bytes at most. */
const BODY_LIMIT = 2048;

function validationUrlOf(event: APIGatewayProxyEventV2): unknown {
  const raw = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
  if (raw.length > BODY_LIMIT) throw new ApiError('APPLE_PAY_VALIDATION_REFUSED');
  try {
    return (JSON.parse(raw) as { validation_url?: unknown } | null)?.validation_url;
  } catch {
    throw new ApiError('APPLE_PAY_VALIDATION_REFUSED');
  }
}

/**
 * POST /auth/{token}/applepay/validate: the page's Apple Pay sheet asks for a merchant session
 * (use-cases/apple-pay.ts). JSON in, Apple's merchant session or the error envelope out.
 */
export const handler: LambdaHandler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(async (event: APIGatewayProxyEventV2) => {
  const d = deps();
  const host = new URL(publicBaseUrl(event, d.config.PUBLIC_BASE_URL)).hostname;
  const session = await validateApplePayMerchant(d, event.pathParameters?.token ?? '', validationUrlOf(event), { host, stage: pageWalletsOf(d.config) });
  return { ...jsonResponse(200, session), headers: { ...jsonResponse(200, null).headers, 'cache-control': 'no-store' } };
})
  .use(requestObservability())
  .use(errorEnvelope()) as unknown as LambdaHandler;
