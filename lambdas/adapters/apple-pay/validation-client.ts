import { request } from 'node:https';
import { APPLE_PAY_VALIDATION_DEADLINE_MS, type MerchantIdentity, type MerchantValidationRequest } from '../../domain/apple-pay';
import type { ApplePayValidation } from '../../ports/apple-pay';

/** A merchant session is about 2 KB. */
const MAX_ANSWER_BYTES = 64 * 1024;

export class ApplePayValidationError extends Error {}

/**
 * POSTs the validation request to Apple's URL over mutual TLS: the merchant identity certificate
 * and key are the client's. `reach` (local runner and tests only, APPLE_PAY_GATEWAY_ADDRESS) connects
 * to a stand-in at another address, still by Apple's host name and checked against `ca`.
 */
export class HttpsApplePayValidation implements ApplePayValidation {
  constructor(
    private readonly reach: { readonly address?: { readonly host: string; readonly port: number }; readonly ca?: string } = {},
    private readonly deadlineMs = APPLE_PAY_VALIDATION_DEADLINE_MS,
  ) {}

  validate(url: URL, identity: MerchantIdentity, body: MerchantValidationRequest): Promise<unknown> {
    const payload = JSON.stringify(body);
    let deadline: NodeJS.Timeout | undefined;
    return new Promise<unknown>((resolve, reject) => {
      const req = request(
        {
          method: 'POST',
          protocol: 'https:',
          host: this.reach.address?.host ?? url.hostname,
          port: this.reach.address?.port ?? 443,
          servername: url.hostname,
          path: url.pathname + url.search,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), host: url.hostname },
          cert: identity.certificate,
          key: identity.privateKey,
          ...(this.reach.ca ? { ca: this.reach.ca } : {}),
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_ANSWER_BYTES) req.destroy(new ApplePayValidationError('Apple\'s answer is too long'));
            else chunks.push(c);
          });
          res.on('end', () => {
            if (res.statusCode !== 200) return reject(new ApplePayValidationError(`Apple answered ${res.statusCode}`));
            try {
              resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
            } catch {
              reject(new ApplePayValidationError('Apple\'s answer is not JSON'));
            }
          });
          res.on('error', reject);
        },
      );
      // One deadline for the whole exchange: an answer that trickles in never resets it (a socket's idle timeout would).
      deadline = setTimeout(() => req.destroy(new ApplePayValidationError(`Apple did not answer within ${this.deadlineMs} ms`)), this.deadlineMs);
      req.on('error', reject);
      req.end(payload);
    }).finally(() => clearTimeout(deadline));
  }
}
