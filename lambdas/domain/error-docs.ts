/**
 * When the API answers each error of the catalog (errors.ts): the documentation of docs/errors.md
 * (npm run docs:errors), apart from the catalog so that no function bundles it. Every error has its
 * entry (the type says so).
 */
import type { ErrorName } from './errors';

export const ERROR_DOCS: Readonly<Record<ErrorName, string>> = {
  REQUEST_INVALID:
    'The body failed validation, the signature did not match, or the body is not acceptable JSON. `errors` lists one item per field; a rule across ' +
    'fields is reported on one of them: `schedule_id` without `recurring_init`, and a wallet (`applepay`, `googlepay`) in `methods` of a session with ' +
    '`recurring_init` or `req_token` (`methods: Wallet payments (applepay, googlepay) store no card, so they cannot be used with recurring_init or req_token.`; ' +
    'docs/wallets.md).',
  FIELD_INVALID:
    'One item of `errors` in the envelope above: the dotted field path and the rule it broke.',
  DUPLICATE_REQUEST:
    'A request reused an idempotency key or order number with different content.',
  CARD_TOKEN_INVALID:
    'A `card_token` is unknown or belongs to another merchant.',
  CARD_TOKEN_EXPIRED:
    'The card behind a `card_token` has expired.',
  PAYMENT_NOT_FOUND:
    'No payment with this id (or order) exists for the calling merchant. Payments of other merchants answer the same.',
  CAPTURE_NOT_PENDING:
    'Capture of a payment that is not an open authorization.',
  CAPTURE_AMOUNT_TOO_BIG:
    'Capture `amount` above the authorized amount.',
  REFUND_NOT_ALLOWED:
    'Refund of a payment that is not settled (an authorization is released instead, a void or a full refund ended it).',
  REFUND_AMOUNT_TOO_BIG:
    'Refund `amount` above what is left to refund.',
  VOID_NOT_SETTLED:
    'Void of a payment in any status other than `settled`.',
  CHARGEBACK_AMOUNT_TOO_BIG:
    "A chargeback above what is left of the payment: captured, less refunded and charged back. Raised by the sandbox's `chargeback` command; " +
    "an acquirer's chargeback that would pass it is not recorded, and is logged and counted for an operator (docs/chargebacks.md).",
  CHARGEBACK_NOT_SETTLED:
    "The sandbox's `chargeback` command on a payment that is not `settled` or `chargeback` (nothing was captured, or a void or full refund gave it back).",
  OPERATION_IN_PROGRESS:
    'A refund while a void, capture or reversal of the payment is in flight (or a void, capture or release while a refund is); also a request whose Idempotency-Key is still being processed.',
  RETRY_NOT_ALLOWED:
    'Retry of a payment that is not a soft-declined recurring payment.',
  RECURRING_TOKEN_INVALID:
    'The `recurring_token` is unknown, belongs to another merchant, or does not belong to `recurring_init_trans_id`.',
  MERCHANT_NOT_FOUND:
    'Admin portal: no merchant with this key.',
  ACQUIRER_ACCOUNT_NOT_FOUND:
    'Admin portal: no acquirer account with this id.',
  CALLBACK_NOT_RESENDABLE:
    'Admin portal: a resend of a callback the merchant is never sent (a ledger-only entry, a declined attempt a later one superseded or that is not final yet) ' +
    'or that was skipped in its turn. `error_message` says which. A callback already waiting to be sent is answered `already-queued` instead.',
  CALLBACK_CONTRADICTS_PAYMENT:
    "Admin portal: a resend of a callback whose order status is not the payment's now (a sale's `settled` after a refund), without " +
    '`"contradiction_confirmed": true`. `error_message` names both states. Nothing is queued; the attempt is audited.',
  LINK_NOT_FOUND:
    'Checkout page status (`GET /auth/{token}/status`, what the processing page polls): the token is malformed or names no payment link.',
  APPLE_PAY_VALIDATION_REFUSED:
    'Checkout page, Apple Pay merchant validation (`POST /auth/{token}` with `applepay_validation_url`, what the page\'s Apple Pay sheet sends): the URL is not an https URL on one of ' +
    'Apple\'s documented Apple Pay gateway hosts (docs/wallets.md), or the link does not offer Apple Pay. Nothing is sent anywhere.',
  UNAUTHORIZED:
    'Admin portal: the operator token is missing, expired or invalid, or the credentials are wrong.',
  OPERATOR_LOCKED:
    'Admin portal sign-in on the local runner: 5 wrong passwords in a row for this user name from this address (whether or not such an operator exists). ' +
    'The wait is 1 minute, doubled by each further wrong password (32 minutes at the tenth, at most 4 hours); other addresses are not affected. ' +
    'Wait, or have it lifted with `npm run operator -- unlock`.',
  FORBIDDEN:
    'Admin portal: the operator is signed in, but the route needs a stronger role (viewer < operator < admin; lib/routes.ts), or the operator has no role.',
  ORIGIN_REFUSED:
    "A stage served through CloudFront and AWS WAF (a custom domain with `edge` settings): the request reached the API's origin name directly, " +
    "without the header CloudFront adds (or with a wrong value). Merchants, customers and the gateway use the public domain. Not on stages without an edge, nor on the local runner.",
  ROUTE_NOT_FOUND:
    'No route of the API has this path, whatever the method (paths are case-sensitive; none ends with `/`). The path is shown percent-encoded ' +
    'and cut after 100 characters, anything shaped like a card number masked; never the query string. A HEAD request gets the status without a body.',
  METHOD_NOT_ALLOWED:
    'The path exists, but not with this method; the `Allow` header lists the methods it takes. A path with a token or an id in it is named by ' +
    'its template (`/auth/{token}`). No route takes HEAD: it gets this without a body. OPTIONS gets 204 with `Allow` instead.',
  MERCHANT_RATE_LIMITED:
    'Merchant API: this merchant_key made more signed requests in the current second than its limit (MERCHANT_REQUESTS_PER_SECOND, 40 by default), ' +
    'counted over every merchant route together. Only requests whose hash verified count, so nobody else can use up a merchant\'s limit. ' +
    'Nothing was done: send the same request again after `Retry-After` seconds (with the same Idempotency-Key, if it had one).',
  OPERATOR_SEARCHES_BUSY:
    'Admin API (count, export): this operator already has as many counts and exports running as one operator may (OPERATOR_SEARCHES_AT_ONCE, 2 by default), ' +
    'counted in the table across every function instance. Nothing was read: ask again after `Retry-After` seconds with the same parameters and cursor.',
  SEARCH_TOO_BROAD:
    'Admin API (count, export): the request\'s time budget ended before it could read even one part of the search, so there is no part and no cursor to answer with. ' +
    'A part read in time is answered as usual, with a cursor to read on.',
  INTERNAL:
    'An unexpected failure on our side; never caused by the request content. Details are only in our logs.',
  APPLE_PAY_VALIDATION_FAILED:
    'Checkout page, Apple Pay merchant validation: Apple did not answer with a merchant session, or the merchant identity certificate is missing (docs/wallets.md). The page keeps the card form.',
  UNAVAILABLE:
    'A dependency (database, secret store, acquirer) did not answer in time.',
};
