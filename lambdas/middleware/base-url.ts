import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/**
 * The public base of this deployment, for links we hand out (redirect_url, the 3-D Secure return).
 * Only from configuration — PUBLIC_BASE_URL, which the stack sets to the API's URL or a custom
 * domain and the local runner to its listening address — or else the domain API Gateway itself
 * says the request came in on. Never from the request's Host or X-Forwarded-* headers: a client
 * sets those, and a link built from them sends customers (and their 3-D Secure step) elsewhere.
 */
export function publicBaseUrl(event: APIGatewayProxyEventV2, configured?: string): string {
  if (configured) return configured.replace(/\/+$/, '');
  return `https://${event.requestContext.domainName}`;
}
