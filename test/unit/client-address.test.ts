import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { readConfig } from '../../lambdas/config';
import { clientAddress } from '../../lambdas/middleware/client-address';

/** The customer's address as the service reads it: API Gateway's source, or CloudFront's viewer header behind CloudFront. */
const event = (sourceIp: string, headers: Record<string, string> = {}) =>
  ({ headers, requestContext: { http: { sourceIp } } }) as unknown as Pick<APIGatewayProxyEventV2, 'headers' | 'requestContext'>;
const direct = { CLIENT_ADDRESS_FROM: 'api-gateway' } as const;
const behindCloudFront = { CLIENT_ADDRESS_FROM: 'cloudfront' } as const;

describe('client address', () => {
  test('directly on API Gateway: its source address; headers a client sends are ignored', () => {
    expect(clientAddress(event('203.0.113.9', { 'cloudfront-viewer-address': '198.51.100.7:1234', 'x-forwarded-for': '192.0.2.1' }), direct)).toBe('203.0.113.9');
  });

  test.each([
    ['198.51.100.7:46532', '198.51.100.7'],
    ['2001:db8::7:46532', '2001:db8::7'],
    ['2001:db8:85a3::8a2e:370:7334:443', '2001:db8:85a3::8a2e:370:7334'],
  ])('behind CloudFront: CloudFront-Viewer-Address %s gives %s, not the edge\'s address', (header, address) => {
    expect(clientAddress(event('130.176.1.1', { 'cloudfront-viewer-address': header, 'x-forwarded-for': '192.0.2.1, 130.176.1.1' }), behindCloudFront)).toBe(address);
  });

  test.each([[undefined], ['198.51.100.7'], ['not-an-ip:80'], ['<script>:1'], ['999.1.1.1:80']])('behind CloudFront a missing or malformed header (%s) gives no address, never the edge\'s', (header) => {
    expect(clientAddress(event('130.176.1.1', header === undefined ? {} : { 'cloudfront-viewer-address': header }), behindCloudFront)).toBeUndefined();
  });

  test('configuration: API Gateway unless the stack says CloudFront; anything else refused at cold start', () => {
    const base = { TABLE_NAME: 't', MERCHANT_SECRET_PREFIX: 'checkout/dev/merchants/' };
    expect(readConfig(base).CLIENT_ADDRESS_FROM).toBe('api-gateway');
    expect(readConfig({ ...base, CLIENT_ADDRESS_FROM: 'cloudfront' }).CLIENT_ADDRESS_FROM).toBe('cloudfront');
    expect(() => readConfig({ ...base, CLIENT_ADDRESS_FROM: 'x-forwarded-for' })).toThrow(/CLIENT_ADDRESS_FROM/);
  });
});
