import middy from '@middy/core';
import httpSecurityHeaders from '@middy/http-security-headers';
import { requestObservability } from './observability';
import { compressPages } from './compress-pages';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { logger } from '../observability/logger';
import { contentSecurityPolicy, htmlResponse, newNonce } from '../checkout-page/headers';
import type { LambdaHandler } from './merchant-endpoint';

/** Form posts of the page are small; anything bigger is refused before parsing. */
export const FORM_LIMIT_BYTES = 16 * 1024;

/**
 * The page a chain answers with when its page failed: HTML that says nothing of the failure, its
 * inline style (if any) under `nonce`. Each kind of page brings its own, so a function carries the
 * texts of its own pages only (the customer's eight languages are not in the operators' portal).
 */
export type ErrorPage = (nonce: string, event: APIGatewayProxyEventV2 | undefined) => string;

/**
 * The chain of every HTML page: logging context, security headers (Middy's, with the per-response
 * CSP and framing rules set by the page itself), an error page that never leaks, and the answer
 * compressed as the client asks (compress-pages.ts).
 */
export function pageChain(core: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>, errorPage: ErrorPage): LambdaHandler {
  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(core)
    // First in, so it runs last: it encodes the page as finally answered (headers set, error page made).
    .use(compressPages())
    .use(requestObservability())
    .use(
      httpSecurityHeaders({
        contentSecurityPolicy: false,
        frameOptions: false,
        crossOriginEmbedderPolicy: false,
        crossOriginOpenerPolicy: false,
        // Middy's list names features browsers no longer know (console noise); the page sets its own.
        permissionsPolicy: false,
        referrerPolicy: { policy: 'no-referrer' },
        strictTransportSecurity: { maxAge: 63072000, includeSubDomains: true, preload: false },
        reportTo: false,
        xssProtection: false,
        reportingEndpoints: false,
      } as never),
    )
    .use({
      onError: async (request) => {
        logger.error('page failed', { errorName: (request.error as Error | undefined)?.name, error: request.error as Error });
        const nonce = newNonce();
        request.response = htmlResponse(500, errorPage(nonce, request.event), contentSecurityPolicy(nonce), false);
      },
    }) as unknown as LambdaHandler;
}

/** Reads an application/x-www-form-urlencoded body, bounded in size. */
export function formFields(event: APIGatewayProxyEventV2): URLSearchParams | undefined {
  const raw = event.body ?? '';
  const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  if (Buffer.byteLength(text) > FORM_LIMIT_BYTES) return undefined;
  const type = event.headers?.['content-type'] ?? '';
  if (!/^application\/x-www-form-urlencoded/i.test(type)) return undefined;
  return new URLSearchParams(text);
}
