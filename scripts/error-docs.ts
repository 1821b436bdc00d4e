import { resolve } from 'node:path';
import { ERRORS, type CatalogEntry } from '../lambdas/domain/errors';

/** Where the generated table lives; a test keeps it equal to renderErrorDocs(). */
export const ERROR_DOCS_PATH = resolve(__dirname, '../docs/errors.md');

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The message as a code span, so `<field path>` reads as text, not as HTML. */
const message = (m: string): string => `\`${m.replace(/`/g, "'")}\``;

const row = (e: CatalogEntry): string => `| ${e.code} | ${e.httpStatus} | ${cell(message(e.message))} | ${cell(e.when)} |`;

/** docs/errors.md, rendered from the catalog in lambdas/domain/errors.ts. */
export function renderErrorDocs(entries: readonly CatalogEntry[] = Object.values(ERRORS)): string {
  return [
    '# Errors',
    '',
    '<!-- Generated from lambdas/domain/errors.ts by `npm run docs:errors`; edit the catalog, not this file. -->',
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
    'Requests that never reach the service are answered by the API gateway in its own format, not with',
    'this envelope: an unknown method or path gets HTTP 404 `{"message":"Not Found"}`, and a body over',
    '10 MB gets HTTP 413; a route over its throttle limit gets HTTP 429 `{"message":"Too Many Requests"}`.',
    '',
    '| Code | HTTP status | Message | When |',
    '|---:|---:|---|---|',
    ...entries.map(row),
    '',
  ].join('\n');
}
