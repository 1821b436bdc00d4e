import { join } from 'node:path';
import { ROUTES } from '../../lib/routes';
import { MERCHANT_BASE_CHAIN } from '../../lambdas/middleware/merchant-endpoint';

/**
 * Every merchant API route shows its chain in its handler file and runs the same one: the common
 * base (logging context, error envelope, JSON body limits), then the schema (zod), the signature
 * and the Idempotency-Key, in that order — the hash is checked only on a valid body, and a key is
 * claimed only for a signed request.
 */
const merchantRoutes = ROUTES.filter((r) => r.path.startsWith('/api/v1/'));

it('finds the merchant API routes in the route table', () => {
  expect(merchantRoutes.map((r) => `${r.method} ${r.path}`)).toEqual(expect.arrayContaining(['POST /api/v1/session', 'POST /api/v1/payment/status', 'POST /api/v1/payment/void']));
  expect(merchantRoutes.length).toBeGreaterThanOrEqual(8);
});

it.each(merchantRoutes.map((r) => [`${r.method} ${r.path}`, r.entry] as const))('%s: validateBody, then verifyHash, then idempotencyKey', async (_route, entry) => {
  const mod = (await import(join(__dirname, '../..', entry))) as { handler: { chain?: readonly string[] } };
  expect(mod.handler.chain).toEqual([...MERCHANT_BASE_CHAIN, 'validateBody', 'verifyHash', 'idempotencyKey']);
});
