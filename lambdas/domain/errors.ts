/**
 * The one catalog of errors the API answers with. Every refusal the service makes comes from here;
 * docs/errors.md is generated from this table (npm run docs:errors) and a test keeps it current.
 */
export interface CatalogEntry {
  readonly code: number;
  readonly httpStatus: number;
  readonly message: string;
  readonly when: string;
}

export const ERRORS = {
  REQUEST_INVALID: {
    code: 0,
    httpStatus: 400,
    message: 'Request data is invalid.',
    when:
      'The body failed validation, the signature did not match, or the body is not acceptable JSON. `errors` lists one item per field; a rule across ' +
      'fields is reported on one of them: `schedule_id` without `recurring_init`, and a wallet (`applepay`, `googlepay`) in `methods` of a session with ' +
      '`recurring_init` or `req_token` (`methods: Wallet payments (applepay, googlepay) store no card, so they cannot be used with recurring_init or req_token.`; ' +
      'docs/wallets.md).',
  },
  FIELD_INVALID: {
    code: 100000,
    httpStatus: 400,
    message: '<field path>: <rule message>',
    when: 'One item of `errors` in the envelope above: the dotted field path and the rule it broke.',
  },
  DUPLICATE_REQUEST: {
    code: 400,
    httpStatus: 409,
    message: 'Duplicate request.',
    when: 'A request reused an idempotency key or order number with different content.',
  },
  CARD_TOKEN_INVALID: {
    code: 205005,
    httpStatus: 400,
    message: 'Card token is invalid or not found.',
    when: 'A `card_token` is unknown or belongs to another merchant.',
  },
  CARD_TOKEN_EXPIRED: {
    code: 205006,
    httpStatus: 400,
    message: 'Card token is expired.',
    when: 'The card behind a `card_token` has expired.',
  },
  PAYMENT_NOT_FOUND: {
    code: 208001,
    httpStatus: 404,
    message: 'Payment not found.',
    when: 'No payment with this id (or order) exists for the calling merchant. Payments of other merchants answer the same.',
  },
  CAPTURE_NOT_PENDING: {
    code: 208003,
    httpStatus: 409,
    message: 'Payment is not in pending status.',
    when: 'Capture of a payment that is not an open authorization.',
  },
  CAPTURE_AMOUNT_TOO_BIG: {
    code: 208004,
    httpStatus: 400,
    message: 'Capture amount is bigger than the authorized amount.',
    when: 'Capture `amount` above the authorized amount.',
  },
  REFUND_NOT_ALLOWED: {
    code: 208005,
    httpStatus: 409,
    message: 'Refund is allowed only for payments in settled status.',
    when: 'Refund of a payment that is not settled (an authorization is released instead, a void or a full refund ended it).',
  },
  REFUND_AMOUNT_TOO_BIG: {
    code: 208006,
    httpStatus: 400,
    message: 'Refund amount is bigger than the payment amount.',
    when: 'Refund `amount` above what is left to refund.',
  },
  VOID_NOT_SETTLED: {
    // 208010 is the platform's "chargeback amount bigger than the payment's amount" (docs/errors.md).
    code: 208013,
    httpStatus: 409,
    message: 'Void is allowed only for payments in settled status.',
    when: 'Void of a payment in any status other than `settled`.',
  },
  CHARGEBACK_AMOUNT_TOO_BIG: {
    code: 208010,
    httpStatus: 400,
    message: 'Chargeback amount is bigger than the payment amount.',
    when:
      "A chargeback above what is left of the payment: captured, less refunded and charged back. Raised by the sandbox's `chargeback` command; " +
      "an acquirer's chargeback that would pass it is not recorded, and is logged and counted for an operator (docs/chargebacks.md).",
  },
  CHARGEBACK_NOT_SETTLED: {
    code: 208014,
    httpStatus: 409,
    message: 'Chargeback is possible only for captured payments.',
    when: "The sandbox's `chargeback` command on a payment that is not `settled` or `chargeback` (nothing was captured, or a void or full refund gave it back).",
  },
  OPERATION_IN_PROGRESS: {
    code: 208012,
    httpStatus: 409,
    message: 'Another operation on this payment is in progress. Try again shortly.',
    when: 'A refund while a void, capture or reversal of the payment is in flight (or a void, capture or release while a refund is); also a request whose Idempotency-Key is still being processed.',
  },
  RETRY_NOT_ALLOWED: {
    code: 208011,
    httpStatus: 409,
    message: 'Retry is allowed only for a soft-declined recurring payment.',
    when: 'Retry of a payment that is not a soft-declined recurring payment.',
  },
  RECURRING_TOKEN_INVALID: {
    code: 208020,
    httpStatus: 400,
    message: 'Recurring token is invalid or does not match the initial transaction.',
    when: 'The `recurring_token` is unknown, belongs to another merchant, or does not belong to `recurring_init_trans_id`.',
  },
  MERCHANT_NOT_FOUND: {
    code: 208030,
    httpStatus: 404,
    message: 'Merchant not found.',
    when: 'Admin portal: no merchant with this key.',
  },
  ACQUIRER_ACCOUNT_NOT_FOUND: {
    code: 208031,
    httpStatus: 404,
    message: 'Acquirer account not found.',
    when: 'Admin portal: no acquirer account with this id.',
  },
  CALLBACK_NOT_RESENDABLE: {
    code: 208040,
    httpStatus: 409,
    message: 'This callback cannot be sent again.',
    when:
      'Admin portal: a resend of a callback the merchant is never sent (a ledger-only entry, a declined attempt a later one superseded or that is not final yet) ' +
      'or that was skipped in its turn. `error_message` says which. A callback already waiting to be sent is answered `already-queued` instead.',
  },
  CALLBACK_CONTRADICTS_PAYMENT: {
    code: 208041,
    httpStatus: 409,
    message: "This callback contradicts the payment's state now; confirm the resend to send it anyway.",
    when:
      "Admin portal: a resend of a callback whose order status is not the payment's now (a sale's `settled` after a refund), without " +
      '`"contradiction_confirmed": true`. `error_message` names both states. Nothing is queued; the attempt is audited.',
  },
  LINK_NOT_FOUND: {
    code: 208050,
    httpStatus: 404,
    message: 'Payment link not found.',
    when: 'Checkout page status (`GET /auth/{token}/status`, what the processing page polls): the token is malformed or names no payment link.',
  },
  APPLE_PAY_VALIDATION_REFUSED: {
    code: 208051,
    httpStatus: 400,
    message: 'Apple Pay merchant validation refused.',
    when:
      'Checkout page, Apple Pay merchant validation (`POST /auth/{token}` with `applepay_validation_url`, what the page\'s Apple Pay sheet sends): the URL is not an https URL on one of ' +
      'Apple\'s documented Apple Pay gateway hosts (docs/wallets.md), or the link does not offer Apple Pay. Nothing is sent anywhere.',
  },
  UNAUTHORIZED: {
    code: 401000,
    httpStatus: 401,
    message: 'Sign in again.',
    when: 'Admin portal: the operator token is missing, expired or invalid, or the credentials are wrong.',
  },
  OPERATOR_LOCKED: {
    code: 401002,
    httpStatus: 401,
    message: 'Too many failed sign-ins for this user name from your address: wait a while before trying again.',
    when:
      'Admin portal sign-in on the local runner: 5 wrong passwords in a row for this user name from this address (whether or not such an operator exists). ' +
      'The wait is 1 minute, doubled by each further wrong password (32 minutes at the tenth, at most 4 hours); other addresses are not affected. ' +
      'Wait, or have it lifted with `npm run operator -- unlock`.',
  },
  FORBIDDEN: {
    code: 403000,
    httpStatus: 403,
    message: 'Your role does not allow this.',
    when: 'Admin portal: the operator is signed in, but the route needs a stronger role (viewer < operator < admin; lib/routes.ts), or the operator has no role.',
  },
  ORIGIN_REFUSED: {
    code: 403001,
    httpStatus: 403,
    message: 'Call this service on its public address.',
    when:
      "A stage served through CloudFront and AWS WAF (a custom domain with `edge` settings): the request reached the API's origin name directly, " +
      "without the header CloudFront adds (or with a wrong value). Merchants, customers and the gateway use the public domain. Not on stages without an edge, nor on the local runner.",
  },
  ROUTE_NOT_FOUND: {
    code: 404000,
    httpStatus: 404,
    message: 'No route: <METHOD> <path> does not exist.',
    when:
      'No route of the API has this path, whatever the method (paths are case-sensitive; none ends with `/`). The path is shown percent-encoded ' +
      'and cut after 100 characters, anything shaped like a card number masked; never the query string. A HEAD request gets the status without a body.',
  },
  METHOD_NOT_ALLOWED: {
    code: 405000,
    httpStatus: 405,
    message: 'Method <METHOD> is not allowed on <path>; use <methods>.',
    when:
      'The path exists, but not with this method; the `Allow` header lists the methods it takes. A path with a token or an id in it is named by ' +
      'its template (`/auth/{token}`). No route takes HEAD: it gets this without a body. OPTIONS gets 204 with `Allow` instead.',
  },
  MERCHANT_RATE_LIMITED: {
    code: 429000,
    httpStatus: 429,
    message: 'Too many requests for this merchant. Retry after the number of seconds in the Retry-After header.',
    when:
      'Merchant API: this merchant_key made more signed requests in the current second than its limit (MERCHANT_REQUESTS_PER_SECOND, 40 by default), ' +
      'counted over every merchant route together. Only requests whose hash verified count, so nobody else can use up a merchant\'s limit. ' +
      'Nothing was done: send the same request again after `Retry-After` seconds (with the same Idempotency-Key, if it had one).',
  },
  OPERATOR_SEARCHES_BUSY: {
    code: 429001,
    httpStatus: 429,
    message: 'Your other counts or exports are still running. Retry after the number of seconds in the Retry-After header.',
    when:
      'Admin API (count, export): this operator already has as many counts and exports running as one operator may (OPERATOR_SEARCHES_AT_ONCE, 2 by default), ' +
      'counted in the table across every function instance. Nothing was read: ask again after `Retry-After` seconds with the same parameters and cursor.',
  },
  SEARCH_TOO_BROAD: {
    code: 422000,
    httpStatus: 422,
    message: 'This search cannot be answered in the time one request has. Narrow your search: fewer days, one merchant, or a status.',
    when:
      'Admin API (count, export): the request\'s time budget ended before it could read even one part of the search, so there is no part and no cursor to answer with. ' +
      'A part read in time is answered as usual, with a cursor to read on.',
  },
  INTERNAL: {
    code: 500000,
    httpStatus: 500,
    message: 'Internal error. The request may be retried.',
    when: 'An unexpected failure on our side; never caused by the request content. Details are only in our logs.',
  },
  APPLE_PAY_VALIDATION_FAILED: {
    code: 502000,
    httpStatus: 502,
    message: 'Apple Pay merchant validation failed. Pay by card, or try again.',
    when: 'Checkout page, Apple Pay merchant validation: Apple did not answer with a merchant session, or the merchant identity certificate is missing (docs/wallets.md). The page keeps the card form.',
  },
  UNAVAILABLE: {
    code: 503000,
    httpStatus: 503,
    message: 'Service temporarily unavailable. The request may be retried.',
    when: 'A dependency (database, secret store, acquirer) did not answer in time.',
  },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorName = keyof typeof ERRORS;

export interface FieldError {
  readonly path: string;
  readonly message: string;
}

/** The JSON body every refusal carries (protocol.md §2). */
export interface ErrorEnvelope {
  error_code: number;
  error_message: string;
  errors: { error_code: number; error_message: string }[];
}

/** A refusal with a catalog entry; thrown by use cases, turned into the envelope at the edge. */
export class ApiError extends Error {
  readonly entry: CatalogEntry;
  readonly fieldErrors: readonly FieldError[];

  constructor(name: ErrorName, fieldErrors: readonly FieldError[] = [], detail?: string) {
    super(detail ?? ERRORS[name].message);
    this.name = 'ApiError';
    this.entry = ERRORS[name];
    this.fieldErrors = fieldErrors;
  }

  get httpStatus(): number {
    return this.entry.httpStatus;
  }

  toEnvelope(): ErrorEnvelope {
    return {
      error_code: this.entry.code,
      error_message: this.message,
      errors: this.fieldErrors.map((f) => ({
        error_code: ERRORS.FIELD_INVALID.code,
        error_message: `${f.path}: ${f.message}`,
      })),
    };
  }
}

/** A refusal that says when to come back: the edge adds `Retry-After` (whole seconds). */
export class RetryLaterError extends ApiError {
  constructor(
    name: ErrorName,
    readonly retryAfterSeconds: number,
  ) {
    super(name);
  }
}

export const invalidRequest = (fieldErrors: readonly FieldError[]): ApiError =>
  new ApiError('REQUEST_INVALID', fieldErrors);

export const HASH_NOT_VALID: FieldError = { path: 'hash', message: 'Hash is not valid.' };
