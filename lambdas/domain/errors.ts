/**
 * The one catalog of errors the API answers with. Every refusal the service makes comes from here;
 * docs/errors.md is generated from this table and when each is answered (error-docs.ts, kept out of
 * the functions' bundles: no function reads it) by npm run docs:errors, and a test keeps it current.
 */
export interface CatalogEntry {
  readonly code: number;
  readonly httpStatus: number;
  readonly message: string;
}

export const ERRORS = {
  REQUEST_INVALID: {
    code: 0,
    httpStatus: 400,
    message: 'Request data is invalid.',
  },
  FIELD_INVALID: {
    code: 100000,
    httpStatus: 400,
    message: '<field path>: <rule message>',
  },
  DUPLICATE_REQUEST: {
    code: 400,
    httpStatus: 409,
    message: 'Duplicate request.',
  },
  CARD_TOKEN_INVALID: {
    code: 205005,
    httpStatus: 400,
    message: 'Card token is invalid or not found.',
  },
  CARD_TOKEN_EXPIRED: {
    code: 205006,
    httpStatus: 400,
    message: 'Card token is expired.',
  },
  PAYMENT_NOT_FOUND: {
    code: 208001,
    httpStatus: 404,
    message: 'Payment not found.',
  },
  CAPTURE_NOT_PENDING: {
    code: 208003,
    httpStatus: 409,
    message: 'Payment is not in pending status.',
  },
  CAPTURE_AMOUNT_TOO_BIG: {
    code: 208004,
    httpStatus: 400,
    message: 'Capture amount is bigger than the authorized amount.',
  },
  REFUND_NOT_ALLOWED: {
    code: 208005,
    httpStatus: 409,
    message: 'Refund is allowed only for payments in settled status.',
  },
  REFUND_AMOUNT_TOO_BIG: {
    code: 208006,
    httpStatus: 400,
    message: 'Refund amount is bigger than the payment amount.',
  },
  VOID_NOT_SETTLED: {
    // 208010 is the platform's "chargeback amount bigger than the payment's amount" (docs/errors.md).
    code: 208013,
    httpStatus: 409,
    message: 'Void is allowed only for payments in settled status.',
  },
  CHARGEBACK_AMOUNT_TOO_BIG: {
    code: 208010,
    httpStatus: 400,
    message: 'Chargeback amount is bigger than the payment amount.',
  },
  CHARGEBACK_NOT_SETTLED: {
    code: 208014,
    httpStatus: 409,
    message: 'Chargeback is possible only for captured payments.',
  },
  OPERATION_IN_PROGRESS: {
    code: 208012,
    httpStatus: 409,
    message: 'Another operation on this payment is in progress. Try again shortly.',
  },
  RETRY_NOT_ALLOWED: {
    code: 208011,
    httpStatus: 409,
    message: 'Retry is allowed only for a soft-declined recurring payment.',
  },
  RECURRING_TOKEN_INVALID: {
    code: 208020,
    httpStatus: 400,
    message: 'Recurring token is invalid or does not match the initial transaction.',
  },
  MERCHANT_NOT_FOUND: {
    code: 208030,
    httpStatus: 404,
    message: 'Merchant not found.',
  },
  ACQUIRER_ACCOUNT_NOT_FOUND: {
    code: 208031,
    httpStatus: 404,
    message: 'Acquirer account not found.',
  },
  CALLBACK_NOT_RESENDABLE: {
    code: 208040,
    httpStatus: 409,
    message: 'This callback cannot be sent again.',
  },
  CALLBACK_CONTRADICTS_PAYMENT: {
    code: 208041,
    httpStatus: 409,
    message: "This callback contradicts the payment's state now; confirm the resend to send it anyway.",
  },
  LINK_NOT_FOUND: {
    code: 208050,
    httpStatus: 404,
    message: 'Payment link not found.',
  },
  APPLE_PAY_VALIDATION_REFUSED: {
    code: 208051,
    httpStatus: 400,
    message: 'Apple Pay merchant validation refused.',
  },
  UNAUTHORIZED: {
    code: 401000,
    httpStatus: 401,
    message: 'Sign in again.',
  },
  OPERATOR_LOCKED: {
    code: 401002,
    httpStatus: 401,
    message: 'Too many failed sign-ins for this user name from your address: wait a while before trying again.',
  },
  FORBIDDEN: {
    code: 403000,
    httpStatus: 403,
    message: 'Your role does not allow this.',
  },
  ORIGIN_REFUSED: {
    code: 403001,
    httpStatus: 403,
    message: 'Call this service on its public address.',
  },
  ROUTE_NOT_FOUND: {
    code: 404000,
    httpStatus: 404,
    message: 'No route: <METHOD> <path> does not exist.',
  },
  METHOD_NOT_ALLOWED: {
    code: 405000,
    httpStatus: 405,
    message: 'Method <METHOD> is not allowed on <path>; use <methods>.',
  },
  MERCHANT_RATE_LIMITED: {
    code: 429000,
    httpStatus: 429,
    message: 'Too many requests for this merchant. Retry after the number of seconds in the Retry-After header.',
  },
  OPERATOR_SEARCHES_BUSY: {
    code: 429001,
    httpStatus: 429,
    message: 'Your other counts or exports are still running. Retry after the number of seconds in the Retry-After header.',
  },
  SEARCH_TOO_BROAD: {
    code: 422000,
    httpStatus: 422,
    message: 'This search cannot be answered in the time one request has. Narrow your search: fewer days or one merchant.',
  },
  INTERNAL: {
    code: 500000,
    httpStatus: 500,
    message: 'Internal error. The request may be retried.',
  },
  APPLE_PAY_VALIDATION_FAILED: {
    code: 502000,
    httpStatus: 502,
    message: 'Apple Pay merchant validation failed. Pay by card, or try again.',
  },
  UNAVAILABLE: {
    code: 503000,
    httpStatus: 503,
    message: 'Service temporarily unavailable. The request may be retried.',
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
