import { resolve } from 'node:path';
import { ERRORS, type CatalogEntry, type ErrorName } from '../lambdas/domain/errors';
import { ERROR_DOCS } from '../lambdas/domain/error-docs';

/** A catalog entry with when the API answers it. */
type DocumentedError = CatalogEntry & { readonly when: string };
const documented = (): DocumentedError[] => (Object.entries(ERRORS) as [ErrorName, CatalogEntry][]).map(([name, e]) => ({ ...e, when: ERROR_DOCS[name] }));

/** Where the generated table lives; a test keeps it equal to renderErrorDocs(). */
export const ERROR_DOCS_PATH = resolve(__dirname, '../docs/errors.md');

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The message as a code span, so `<field path>` reads as text, not as HTML. */
const message = (m: string): string => `\`${m.replace(/`/g, "'")}\``;

const row = (e: DocumentedError): string => `| ${e.code} | ${e.httpStatus} | ${cell(message(e.message))} | ${cell(e.when)} |`;

/** docs/errors.md, rendered from the catalog in lambdas/domain/errors.ts and lambdas/domain/error-docs.ts. */
export function renderErrorDocs(entries: readonly DocumentedError[] = documented()): string {
  return [
    '# Errors',
    '',
    '<!-- Generated from lambdas/domain/errors.ts and error-docs.ts by `npm run docs:errors`; edit the catalog, not this file. -->',
    '',
    'Every refusal of the merchant API carries the same JSON body, with the HTTP status of its code:',
    '',
    '```json',
    '{',
    '  "error_code": 0,',
    '  "error_message": "Request data is invalid.",',
    '  "errors": [',
    '    { "error_code": 100000, "error_message": "order.number: This value should not be blank." },',
    '    { "error_code": 100000, "error_message": "order.amount: This value should be greater than 0." }',
    '  ]',
    '}',
    '```',
    '',
    '- `error_code` (integer): a code from the table below.',
    '- `error_message` (string): what went wrong, in words.',
    '- `errors` (array): for invalid request data (code 0), one item per invalid field with code 100000 and',
    '  the message `<dotted field path>: <rule message>`; an empty array for every other code.',
    '',
    'A wrong `hash` and an unknown `merchant_key` get the same answer: code 0 with the single item',
    '`hash: Hash is not valid.`, so merchant keys cannot be discovered by trying them.',
    '',
    "The rule messages are the platform's exact words, which the merchants' client libraries may match, so",
    'they never carry more. `order.amount: This value is not valid.` (and `amount: …` of a refund or capture)',
    "means most often an amount written with other decimals than its currency's: an amount is a string with",
    'exactly the currency\'s decimals, `10.00` USD, `1500` JPY (no decimals: `1500.00` is refused), `10.250` KWD.',
    "The local runner's log line for such a refusal says so, and `npm run merchant -- sign` and `refund` add a",
    'note when an amount is written so (docs/sandbox.md, "Amounts in zero-decimal currencies").',
    '',
    'A request no route takes gets this envelope too, from the API\'s fallback (its `$default` route):',
    'HTTP 404 (code 404000) for a path no route has, whatever the method, and HTTP 405 (code 405000) for',
    'a path that exists with other methods, its `Allow` header listing them. The message says which, e.g.',
    '`No route: POST /api/v1/sesion does not exist.` or `Method GET is not allowed on /api/v1/session; use POST.`',
    'No route takes HEAD: it gets the same status and headers without a body. OPTIONS on a path that',
    'exists is answered 204 with `Allow` (and no CORS headers: the API is not meant for browsers of',
    'other sites).',
    '',
    'Only what never reaches a function is answered by the API gateway in its own format: a body over',
    '10 MB gets HTTP 413 `{"message":"Request Entity Too Large"}`, a route over its throttle limit HTTP',
    '429 `{"message":"Too Many Requests"}`, and an admin API route without a valid operator token HTTP',
    '401 `{"message":"Unauthorized"}`.',
    '',
    '## The HTTP status of a refusal',
    '',
    "The platform's examples answer every refusal with HTTP 400, and the merchants' client libraries read",
    '`error_code`, treating any status but 200 as an error; so a status of our own choosing breaks none of',
    'them. We answer by what the refusal means, so that a client or a proxy that only sees the status',
    'still does the right thing:',
    '',
    '- **400**: the request is wrong in itself and the same request will always be refused (invalid data,',
    '  a bad hash, an amount above what the payment allows, an unknown or expired card token).',
    '- **404**: what the request names does not exist for the caller (a payment, a merchant, a link);',
    "  another merchant's payment answers the same, so ids cannot be probed.",
    "- **409**: the request is valid, but the payment's state now refuses it: it is not in the status the",
    '  operation needs (not settled, not pending), another operation on it is in flight (208012: sending it',
    '  again shortly may succeed), or an Idempotency-Key or order number was reused with other content',
    '  (the platform\'s code 400, "Duplicate request.", with HTTP 409).',
    '- **401, 403, 429, 503**: who may ask, how often, and a passing failure of ours (503 503000: send',
    '  the same request again with its Idempotency-Key; a replay answers what the first one did).',
    '',
    "Codes: the platform's own where it numbers the refusal (208001 to 208006, 205005, 205006, 400, 0 and",
    "100000); ours where it does not, chosen outside its list. 208010 is the platform's \"chargeback amount",
    "bigger than the payment's amount\", so the refusal of a void of a payment that is not settled is",
    '208013 (it was 208010 before the chargeback work; a client that matched 208010 for it should match',
    '208013, or the status 409).',
    '',
    '| Code | HTTP status | Message | When |',
    '|---:|---:|---|---|',
    ...entries.map(row),
    '',
  ].join('\n');
}
