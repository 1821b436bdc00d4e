import { redactText } from '../observability/redact';
import { ApiError } from './errors';

/**
 * The refusals of a request no route takes (ROUTE_NOT_FOUND, METHOD_NOT_ALLOWED), with the method
 * and path they name made safe to echo: the answer says what is wrong, but never returns more than
 * a bounded, plain-ASCII, masked part of what was sent.
 */

/** At most this many characters of a path are shown, then `…`. */
export const MAX_SHOWN_PATH = 100;

/**
 * Characters shown as they are: RFC 3986's unreserved characters and sub-delimiters, `:`, `@` and
 * `/`. Everything else (spaces, quotes, `<`, `{`, `\`, controls, anything beyond ASCII) is shown
 * percent-encoded, byte by byte of its UTF-8.
 */
const SHOWN_AS_IS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/]$/;
const ESCAPE = /^%[0-9A-Fa-f]{2}/;

const percentEncoded = (char: string): string =>
  [...Buffer.from(char, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/**
 * A path as the answer may show it: escapes kept (upper-case hex), every other character outside
 * SHOWN_AS_IS percent-encoded (a `%` that starts no escape too), anything shaped like a card number
 * masked, and cut after MAX_SHOWN_PATH characters (never inside an escape). Never the query string:
 * callers pass the path only.
 */
export function shownPath(path: string): string {
  let safe = '';
  for (let i = 0; i < path.length; ) {
    const escape = ESCAPE.exec(path.slice(i, i + 3))?.[0];
    if (escape) {
      safe += escape.toUpperCase();
      i += 3;
      continue;
    }
    const char = String.fromCodePoint(path.codePointAt(i) ?? 0xfffd);
    safe += SHOWN_AS_IS.test(char) ? char : percentEncoded(char);
    i += char.length;
  }
  const masked = redactText(safe || '/');
  if (masked.length <= MAX_SHOWN_PATH) return masked;
  let cut = masked.slice(0, MAX_SHOWN_PATH);
  // An escape cut in two would read as another character.
  const partial = cut.lastIndexOf('%');
  if (partial > MAX_SHOWN_PATH - 3) cut = cut.slice(0, partial);
  return `${cut}…`;
}

/** The method as the answer may show it: upper-case letters and dashes, at most 20 (API Gateway and Node accept nothing else anyway). */
export function shownMethod(method: string): string {
  return method.toUpperCase().replace(/[^A-Z-]/g, '').slice(0, 20) || '?';
}

/** `GET`, `GET or POST`, `GET, POST or PUT`. */
const alternatives = (methods: readonly string[]): string =>
  methods.length <= 1 ? (methods[0] ?? '') : `${methods.slice(0, -1).join(', ')} or ${methods[methods.length - 1]}`;

/** No route has this path: `No route: POST /api/v1/sesion does not exist.` */
export const routeNotFound = (method: string, path: string): ApiError =>
  new ApiError('ROUTE_NOT_FOUND', [], `No route: ${shownMethod(method)} ${shownPath(path)} does not exist.`);

/**
 * The path exists with other methods: `Method GET is not allowed on /api/v1/session; use POST.`
 * `where` is already safe to show (a route's template, or shownPath of the path).
 */
export const methodNotAllowed = (method: string, where: string, allowed: readonly string[]): ApiError =>
  new ApiError('METHOD_NOT_ALLOWED', [], `Method ${shownMethod(method)} is not allowed on ${where}; use ${alternatives(allowed)}.`);
