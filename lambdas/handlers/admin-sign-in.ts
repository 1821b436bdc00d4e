import middy from '@middy/core';
import { requestObservability } from '../middleware/observability';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { storeDeps as deps } from '../wiring/stores';
import { ApiError, invalidRequest } from '../domain/errors';
import { RULE } from '../domain/validation';
import { errorEnvelope, jsonResponse } from '../middleware/error-envelope';
import { jsonBody } from '../middleware/json-body';
import type { LambdaHandler } from '../middleware/merchant-endpoint';
import { logger } from '../observability/logger';
import { signInOperator } from '../use-cases/operator-sign-in';

/**
 * POST /admin/api/session: an operator of the local runner signs in and gets a token for the admin
 * API, and the audit log records it, or its refusal. Local only (lib/routes.ts): on AWS operators
 * sign in on Cognito's pages (ADR 0019).
 */
export const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(async (event: APIGatewayProxyEventV2) => {
  const body = event.body as unknown as { username?: unknown; password?: unknown };
  const username = typeof body.username === 'string' ? body.username.trim() : '';
  const password = typeof body.password === 'string' ? body.password : '';
  const missing = [...(username ? [] : [{ path: 'username', message: RULE.blank }]), ...(password ? [] : [{ path: 'password', message: RULE.blank }])];
  if (missing.length) throw invalidRequest(missing);
  // Failures count per user name and address (the address API Gateway or the runner saw, never a header).
  // Every answer is written to the audit log (use-cases/operator-sign-in.ts).
  const result = await signInOperator(deps(), username.slice(0, 128), password.slice(0, 256), event.requestContext?.http?.sourceIp);
  if (result.kind === 'locked') {
    logger.warn('operator sign-in refused: locked', { username: username.slice(0, 64) });
    throw new ApiError('OPERATOR_LOCKED');
  }
  if (result.kind === 'refused') {
    logger.warn('operator sign-in refused', { username: username.slice(0, 64) });
    throw new ApiError('UNAUTHORIZED', [], 'Wrong user name or password.');
  }
  logger.info('operator signed in', { username: result.username, role: result.role ?? 'none' });
  return jsonResponse(200, { token: result.token, expires_in: result.expiresInSeconds, username: result.username });
})
  .use(requestObservability())
  .use(errorEnvelope())
  .use(jsonBody()) as unknown as LambdaHandler;
