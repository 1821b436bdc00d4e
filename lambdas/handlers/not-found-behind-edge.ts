import '../wiring/origin-secret';

/**
 * The `$default` route's function on a stage behind CloudFront (lib/checkout-stack.ts picks this
 * entry there): the same answers (lambdas/handlers/not-found.ts), and the origin check every HTTP
 * function makes, with the one Secrets Manager client it needs for it. The plain entry stays without
 * any SDK client, for the stages that have no origin secret.
 */
export { handler } from './not-found';
