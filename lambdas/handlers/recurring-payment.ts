import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { idempotencyKey, merchantApi, validateBody, verifyHash } from '../middleware/merchant-endpoint';
import { chargeRecurring, recurringHashFields, validateRecurring } from '../use-cases/recurring-payment';

const charge = merchantApi<ReturnType<typeof validateRecurring>>()
  .use(validateBody(validateRecurring))
  .use(verifyHash(recurringHashFields))
  .use(idempotencyKey())
  .handler(({ deps, merchantKey, body }) => chargeRecurring(deps, merchantKey, body));

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
 * /api/v1/payment/{alias}: any other {alias} is answered as API Gateway answers unknown routes.
 */
export const handler = Object.assign(
  async (event: APIGatewayProxyEventV2, context: Context) => {
    if (!spelledRecurring(event.pathParameters?.alias)) {
      return { statusCode: 404, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'Not Found' }) };
    }
    return charge(event, context);
  },
  { chain: charge.chain },
);
