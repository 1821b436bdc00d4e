import { APPLE_PAY_VALIDATION_DEADLINE_MS } from '../../lambdas/domain/apple-pay';
import { ROUTES } from '../../lib/routes';
import { ACQUIRER_TIMEOUTS, OWN_WORK_MS, routeTimeoutSeconds } from '../../lib/time-budget';

/**
 * The pay route's function also validates Apple Pay merchants (POST /auth/{token} with
 * applepay_validation_url): Apple's whole answer, with the route's own reads and secrets, must fit
 * the function's time, so a slow Apple is the page's 502, never a function cut off by Lambda.
 */
test('Apple Pay validation\'s deadline and the route\'s own work fit the pay route\'s function timeout', () => {
  const pay = ROUTES.find((r) => r.id === 'CheckoutPay')!;
  const seconds = routeTimeoutSeconds(pay, ACQUIRER_TIMEOUTS);
  expect(APPLE_PAY_VALIDATION_DEADLINE_MS + OWN_WORK_MS).toBeLessThanOrEqual(seconds * 1000);
});
