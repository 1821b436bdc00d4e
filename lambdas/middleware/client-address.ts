import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Config } from '../config';

const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$/;
const IPV6 = /^[0-9a-f:.]{2,45}$/i;
const isAddress = (v: string): boolean => IPV4.test(v) || (v.includes(':') && IPV6.test(v));

/**
 * The client's IP address (the customer's, sent to the acquirer for its risk checks). Directly on
 * API Gateway its source address. Behind CloudFront (CLIENT_ADDRESS_FROM=cloudfront) that is one of
 * CloudFront's, and the client's is in CloudFront-Viewer-Address (`198.51.100.7:46532`,
 * `2001:db8::7:46532`): CloudFront writes that header itself, replacing any a client sent. Never
 * X-Forwarded-For, whose first entries a client writes. Undefined when the header is missing or malformed.
 */
export function clientAddress(event: Pick<APIGatewayProxyEventV2, 'headers' | 'requestContext'>, config: Pick<Config, 'CLIENT_ADDRESS_FROM'>): string | undefined {
  if (config.CLIENT_ADDRESS_FROM === 'api-gateway') return event.requestContext?.http?.sourceIp;
  const viewer = event.headers?.['cloudfront-viewer-address'];
  if (!viewer) return undefined;
  const cut = viewer.lastIndexOf(':');
  const address = cut > 0 && /^\d{1,5}$/.test(viewer.slice(cut + 1)) ? viewer.slice(0, cut) : '';
  return isAddress(address) ? address : undefined;
}
