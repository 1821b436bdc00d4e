import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** The public base of this deployment, for links we hand out. */
export function publicBaseUrl(event: APIGatewayProxyEventV2, configured?: string): string {
  if (configured) return configured.replace(/\/+$/, '');
  const host = event.headers?.['x-forwarded-host'] ?? event.requestContext?.domainName ?? event.headers?.host ?? 'localhost';
  const proto = event.headers?.['x-forwarded-proto'] ?? (/^(localhost|127\.|\[::1\])/.test(host) ? 'http' : 'https');
  return `${proto}://${host}`;
}
