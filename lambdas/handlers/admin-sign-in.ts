import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { deps } from '../container';
import { ApiError, invalidRequest } from '../domain/errors';
import { RULE } from '../domain/validation';
import { errorEnvelope, jsonResponse } from '../middleware/error-envelope';
import { jsonBody } from '../middleware/json-body';
import type { LambdaHandler } from '../middleware/merchant-endpoint';
import { logger } from '../observability/logger';

/** POST /admin/api/session: an operator signs in and gets a token for the admin API. */
export const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(async (event: APIGatewayProxyEventV2) => {
  const body = event.body as unknown as { username?: unknown; password?: unknown; mfa_code?: unknown };
  const username = typeof body.username === 'string' ? body.username.trim() : '';
  const password = typeof body.password === 'string' ? body.password : '';
  const missing = [...(username ? [] : [{ path: 'username', message: RULE.blank }]), ...(password ? [] : [{ path: 'password', message: RULE.blank }])];
  if (missing.length) throw invalidRequest(missing);
  const mfaCode = typeof body.mfa_code === 'string' && /^\d{6}$/.test(body.mfa_code.trim()) ? body.mfa_code.trim() : undefined;
  const result = await deps().operators.signIn(username.slice(0, 128), password.slice(0, 256), mfaCode);
  if (result.kind === 'mfa-required') throw new ApiError('MFA_REQUIRED');
  if (result.kind === 'refused') {
    logger.warn('operator sign-in refused', { username: username.slice(0, 64) });
    throw new ApiError('UNAUTHORIZED', [], 'Wrong user name or password.');
  }
  if (result.kind === 'password-change-required') {
    throw new ApiError('UNAUTHORIZED', [], 'This operator must set a permanent password first (see docs/operations.md).');
  }
  logger.info('operator signed in', { username: result.username });
  return jsonResponse(200, { token: result.token, expires_in: result.expiresInSeconds, username: result.username });
})
  .use(injectLambdaContext(logger, { logEvent: false, resetKeys: true, correlationIdPath: 'requestContext.requestId' }))
  .use(errorEnvelope())
  .use(jsonBody()) as unknown as LambdaHandler;
