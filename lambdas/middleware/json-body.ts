import type middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { invalidRequest } from '../domain/errors';

/** Explicit limits on what a request body may be. */
export const BODY_LIMITS = { maxBytes: 64 * 1024, maxDepth: 16 } as const;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const bodyProblem = (message: string) => invalidRequest([{ path: 'body', message }]);

/** Deepest bracket nesting, skipping strings; a linear scan before JSON.parse can recurse. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash escapes the next character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) max = Math.max(max, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return max;
}

/**
 * Checks the raw body before Middy's JSON parser sees it: JSON content type, not empty, not too
 * large, not too deep. Then parses it, refusing prototype keys, and insists on a JSON object.
 */
export function jsonBody(): middy.MiddlewareObj<APIGatewayProxyEventV2> {
  const parser = httpJsonBodyParser({
    // The content type is checked below; Middy's stricter pattern would call the JSON of
    // "application/json ; charset=utf-8" malformed. (The option exists at runtime, not in its types.)
    disableContentTypeCheck: true,
    reviver: (key: string, value: unknown) => {
      if (FORBIDDEN_KEYS.has(key)) throw new SyntaxError(`forbidden key ${key}`);
      return value;
    },
  } as Parameters<typeof httpJsonBodyParser>[0]);
  return {
    before: async (request) => {
      const { event } = request;
      const contentType = event.headers?.['content-type'] ?? '';
      if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType)) {
        throw bodyProblem('The request content type should be application/json.');
      }
      const raw = event.body ?? '';
      const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
      if (text.trim() === '') throw bodyProblem(RULE_EMPTY);
      if (Buffer.byteLength(text, 'utf8') > BODY_LIMITS.maxBytes) {
        throw bodyProblem(`The request body is too large. It should have ${BODY_LIMITS.maxBytes} bytes or less.`);
      }
      if (jsonDepth(text) > BODY_LIMITS.maxDepth) {
        throw bodyProblem(`The request body is nested too deeply. It should have ${BODY_LIMITS.maxDepth} levels or less.`);
      }
      event.body = text;
      event.isBase64Encoded = false;
      try {
        await parser.before?.(request as never);
      } catch {
        throw bodyProblem('The request body is not valid JSON.');
      }
      const body = event.body as unknown;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        throw bodyProblem('The request body should be a JSON object.');
      }
    },
  };
}

const RULE_EMPTY = 'This value should not be blank.';
