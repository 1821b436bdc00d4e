import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { idempotencyKey, merchantApi, validateBody, verifyHash } from '../middleware/merchant-endpoint';
import { routeDeps } from '../wiring/acquirer';
import { chargeRecurring, recurringHashFields, validateRecurring } from '../use-cases/recurring-payment';
import { routeNotFound } from '../domain/unknown-route';
import { jsonResponse } from '../middleware/error-envelope';

const charge = merchantApi<ReturnType<typeof validateRecurring>>()
  .use(validateBody(validateRecurring))
  .use(verifyHash(recurringHashFields))
  .use(idempotencyKey())
  .handler(({ deps, merchantKey, body }) => chargeRecurring(deps, merchantKey, body), { deps: routeDeps });

/** The Cyrillic spelling of the path's last segment ("re" + U+0441 + "urring"). */
export const CYRILLIC_RECURRING = 're\u0441urring';

function spelledRecurring(alias: string | undefined): boolean {
  if (alias === undefined) return true;
  try {
    return decodeURIComponent(alias) === CYRILLIC_RECURRING;
  } catch {
    return false;
  }
}

/**
 * POST /api/v1/payment/recurring, and its Cyrillic-spelled twin reached through
 * /api/v1/payment/{alias} (the route's `servedValues`): any other {alias} is answered as a path no
 * route has, as the fallback answers one (lambdas/handlers/not-found.ts).
 */
export const handler = Object.assign(
  async (event: APIGatewayProxyEventV2, context: Context) => {
    if (!spelledRecurring(event.pathParameters?.alias)) {
      const error = routeNotFound(event.requestContext?.http?.method ?? 'POST', event.rawPath ?? '/');
      return jsonResponse(error.httpStatus, error.toEnvelope());
    }
    return charge(event, context);
  },
  { chain: charge.chain },
);
