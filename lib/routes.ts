/**
 * The one route table. The CDK stack makes one Lambda and one HTTP API route of each entry; the
 * local runner serves the same handlers at the same paths. Nothing else lists routes: FALLBACK_ROUTE
 * (below) answers whatever none of them takes, from this table.
 */
import type { AcquirerName } from './acquirer';
import type { OperatorRole } from './operator-roles';
import type { AcquirerWorkKind } from './time-budget';
import { ACCESS, NO_TABLE_ACCESS, tableAccess, type TableAccess } from './table-access';

interface RouteFields {
  /** Stable id: construct ids, function names and log groups derive from it. */
  readonly id: string;
  readonly method: 'GET' | 'POST' | 'PUT';
  /** API Gateway path syntax; `{name}` is a path parameter. */
  readonly path: string;
  /** The handler module, relative to the project root; it exports `handler`. */
  readonly entry: string;
  readonly access: {
    /** The item kinds, actions and indexes its code uses (lib/table-access.ts); nothing else is granted. */
    readonly table: TableAccess;
    /** Reads merchant signing passwords from Secrets Manager; 'write' also creates and rotates them. */
    readonly merchantSecrets: boolean | 'write';
    /**
     * Needs the acquirer's credentials without touching its records (the S2S CARD redirect page);
     * a function that touches them (lib/table-access.ts acquirer blocks) gets them anyway.
     */
    readonly acquirerCredentials?: true;
    /** Seals and opens the portal's page cursors: reads the stack's cursor key (CURSOR_SECRET_ID). */
    readonly cursorSecret?: true;
  };
  /**
   * A path parameter that stands for a few spellings of one literal segment: the only values
   * (decoded) its handler serves, answering any other as a path no route has. The fallback
   * (FALLBACK_ROUTE) reads it to tell a wrong method (405) from an unknown path (404).
   */
  readonly servedValues?: { readonly [parameter: string]: readonly string[] };
  /** Exists only on stages whose acquirer this is (its own pages and callbacks). */
  readonly acquirer?: AcquirerName;
  /** Route-level throttling in the cloud (requests per second, burst). */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  readonly memoryMb?: number;
  /**
   * For a route without acquirer work; one with `acquirerWork` gets its timeout from the acquirer's
   * timeouts (lib/time-budget.ts), never a number written here.
   */
  readonly timeoutSeconds?: number;
  /**
   * The acquirer work one request does in a row (lib/time-budget.ts ACQUIRER_WORK): its function's
   * timeout is derived from it. Every route whose access reaches the acquirer's records declares it.
   */
  readonly acquirerWork?: AcquirerWorkKind;
  /**
   * Served by the local runner only; the stack makes no function or route of it (the local
   * stand-in for Cognito's sign-in pages, ADR 0019).
   */
  readonly localOnly?: true;
}

/**
 * Who may call: everyone (the route checks a merchant signature or a link token itself), or
 * signed-in operators (the API's JWT authorizer in the cloud, its local equivalent locally) whose
 * role is at least `role` (lib/operator-roles.ts; lambdas/middleware/operator-endpoint.ts refuses
 * anyone else with 403).
 */
type RouteAuth = { readonly auth?: undefined; readonly role?: undefined } | { readonly auth: 'operator'; readonly role: OperatorRole };

export type RouteDefinition = RouteFields & RouteAuth;

const MERCHANT_API_THROTTLE = { rateLimit: 100, burstLimit: 200 } as const;
const CHECKOUT_PAGE_THROTTLE = { rateLimit: 200, burstLimit: 400 } as const;
const ADMIN_THROTTLE = { rateLimit: 20, burstLimit: 40 } as const;
/** The gateway's callbacks: a few per payment; a 429 would count as a timeout towards its URL block, so generous. */
const ACQUIRER_CALLBACK_THROTTLE = { rateLimit: 200, burstLimit: 400 } as const;

/** Void, refund and capture by the merchant: one payment of its own, changed around one acquirer follow-up. */
const MERCHANT_FOLLOW_UP = tableAccess(ACCESS.merchantGate, ACCESS.requestKeyClaim, ACCESS.paymentChange, ACCESS.acquirerFollowUps);
/**
 * A recurring charge: the chain, a new payment (its details and state put, then changed; the first
 * payment's read for its IP, a replay's read by query), the merchant's settings, the stored card.
 */
const RECURRING_CHARGE = tableAccess(ACCESS.merchantGate, ACCESS.requestKeyClaim, ACCESS.merchantSettingsRead, ACCESS.acquirerMerchantInitiated, {
  items: { PAYMENT: ['GetItem', 'PutItem', 'Query', 'UpdateItem'], RECURRING: ['GetItem'] },
});
/** An operator's capture, release, void or refund (one or in bulk), written to the audit log. */
const OPERATOR_MONEY_ACTION = tableAccess(ACCESS.paymentChange, ACCESS.acquirerFollowUps, ACCESS.auditAppend);

export const ROUTES: readonly RouteDefinition[] = [
  {
    id: 'CreateSession',
    method: 'POST',
    path: '/api/v1/session',
    entry: 'lambdas/handlers/create-session.ts',
    access: { table: tableAccess(ACCESS.merchantGate, ACCESS.requestKeyClaim, { items: { PAYMENT: ['PutItem', 'Query'], CARDTOKEN: ['BatchGetItem', 'GetItem'] } }), merchantSecrets: true },
    throttle: MERCHANT_API_THROTTLE,
  },
  {
    id: 'PaymentStatus',
    method: 'POST',
    path: '/api/v1/payment/status',
    entry: 'lambdas/handlers/payment-status.ts',
    access: { table: tableAccess(ACCESS.merchantGate, ACCESS.requestKeyCheck, ACCESS.paymentRead, { indexes: ['lookup'] }), merchantSecrets: true },
    throttle: MERCHANT_API_THROTTLE,
  },
  {
    id: 'RecurringPayment',
    method: 'POST',
    path: '/api/v1/payment/recurring',
    entry: 'lambdas/handlers/recurring-payment.ts',
    access: { table: RECURRING_CHARGE, merchantSecrets: true },
    throttle: MERCHANT_API_THROTTLE,
    acquirerWork: 'authorization',
  },
  {
    id: 'VoidPayment',
    method: 'POST',
    path: '/api/v1/payment/void',
    entry: 'lambdas/handlers/void-payment.ts',
    access: { table: MERCHANT_FOLLOW_UP, merchantSecrets: true },
    throttle: MERCHANT_API_THROTTLE,
    acquirerWork: 'followUp',
  },
  {
    id: 'RefundPayment',
    method: 'POST',
    path: '/api/v1/payment/refund',
    entry: 'lambdas/handlers/refund-payment.ts',
    access: { table: MERCHANT_FOLLOW_UP, merchantSecrets: true },
    throttle: MERCHANT_API_THROTTLE,
    acquirerWork: 'followUp',
  },
  {
    id: 'RetryPayment',
    method: 'POST',
    path: '/api/v1/payment/retry',
    entry: 'lambdas/handlers/retry-payment.ts',
    access: { table: tableAccess(ACCESS.merchantGate, ACCESS.requestKeyClaim, ACCESS.paymentChange, ACCESS.merchantSettingsRead, ACCESS.acquirerMerchantInitiated, { items: { RECURRING: ['GetItem'] } }), merchantSecrets: true },
    throttle: MERCHANT_API_THROTTLE,
    acquirerWork: 'authorization',
  },
  {
    id: 'CapturePayment',
    method: 'POST',
    path: '/api/v1/payment/capture',
    entry: 'lambdas/handlers/capture-payment.ts',
    access: { table: MERCHANT_FOLLOW_UP, merchantSecrets: true },
    throttle: MERCHANT_API_THROTTLE,
    acquirerWork: 'followUp',
  },
  {
    // The platform also publishes the recurring path with a Cyrillic "с" (U+0441) as the third
    // letter of "recurring". A route key with a non-ASCII (or percent-encoded) path cannot be relied
    // on at API Gateway, so a path parameter catches it; explicit routes above win over it, and
    // the handler answers 404 for any other spelling (see recurring-payment.ts).
    id: 'RecurringPaymentCyrillic',
    method: 'POST',
    path: '/api/v1/payment/{alias}',
    servedValues: { alias: ['re\u0441urring'] },
    entry: 'lambdas/handlers/recurring-payment.ts',
    access: { table: RECURRING_CHARGE, merchantSecrets: true },
    throttle: MERCHANT_API_THROTTLE,
    acquirerWork: 'authorization',
  },
  {
    id: 'CheckoutPage',
    method: 'GET',
    path: '/auth/{token}',
    entry: 'lambdas/handlers/checkout-page.ts',
    access: { table: tableAccess(ACCESS.paymentRead, ACCESS.merchantSettingsRead), merchantSecrets: true },
    throttle: CHECKOUT_PAGE_THROTTLE,
  },
  {
    id: 'CheckoutPay',
    method: 'POST',
    path: '/auth/{token}',
    entry: 'lambdas/handlers/checkout-pay.ts',
    access: { table: tableAccess(ACCESS.paymentChange, ACCESS.merchantSettingsRead, ACCESS.acquirerAuthorizations, ACCESS.tokenIssue, ACCESS.savedCardRead), merchantSecrets: true },
    throttle: CHECKOUT_PAGE_THROTTLE,
    acquirerWork: 'authorization',
  },
  {
    id: 'CheckoutComplete',
    method: 'GET',
    path: '/auth/{token}/complete',
    entry: 'lambdas/handlers/checkout-complete.ts',
    access: { table: tableAccess(ACCESS.paymentChange, ACCESS.merchantSettingsRead, ACCESS.acquirerLookups, ACCESS.tokenIssue), merchantSecrets: true },
    throttle: CHECKOUT_PAGE_THROTTLE,
    acquirerWork: 'status',
  },
  {
    // What the processing page polls while an attempt's outcome is open: the payment's record only.
    id: 'CheckoutStatus',
    method: 'GET',
    path: '/auth/{token}/status',
    entry: 'lambdas/handlers/checkout-status.ts',
    access: { table: tableAccess(ACCESS.paymentRead), merchantSecrets: false },
    throttle: CHECKOUT_PAGE_THROTTLE,
  },
  {
    id: 'SandboxChallengePage',
    acquirer: 'sandbox',
    method: 'GET',
    path: '/sandbox/challenge/{key}',
    entry: 'lambdas/handlers/sandbox-challenge-page.ts',
    access: { table: tableAccess(ACCESS.paymentRead, ACCESS.merchantSettingsRead, ACCESS.acquirerLookups), merchantSecrets: false },
    throttle: CHECKOUT_PAGE_THROTTLE,
  },
  {
    id: 'SandboxChallengeAnswer',
    acquirer: 'sandbox',
    method: 'POST',
    path: '/sandbox/challenge/{key}',
    entry: 'lambdas/handlers/sandbox-challenge-answer.ts',
    access: { table: tableAccess(ACCESS.paymentRead, ACCESS.merchantSettingsRead, ACCESS.acquirerChallengeAnswers), merchantSecrets: false },
    throttle: CHECKOUT_PAGE_THROTTLE,
  },
  {
    // The customer's way to the gateway's 3-D Secure or bank page (an auto-submitting form).
    id: 'S2SCardRedirect',
    acquirer: 's2s-card',
    method: 'GET',
    path: '/acquirer/s2s-card/redirect',
    entry: 'lambdas/handlers/s2s-card-redirect.ts',
    // Reads the attempt's record: a link whose attempt is over sends nobody to the gateway again.
    access: { table: tableAccess({ items: { S2SCARD: ['GetItem'] } }), merchantSecrets: false, acquirerCredentials: true },
    throttle: CHECKOUT_PAGE_THROTTLE,
  },
  {
    // The gateway's callbacks (the account's Notification URL): verified, recorded, answered OK at once.
    id: 'S2SCardNotify',
    acquirer: 's2s-card',
    method: 'POST',
    path: '/acquirer/s2s-card/notify',
    entry: 'lambdas/handlers/s2s-card-notify.ts',
    access: { table: tableAccess(ACCESS.acquirerNotifications), merchantSecrets: false },
    throttle: ACQUIRER_CALLBACK_THROTTLE,
  },
  {
    id: 'AdminPortal',
    method: 'GET',
    path: '/admin',
    entry: 'lambdas/handlers/admin-portal.ts',
    access: { table: NO_TABLE_ACCESS, merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
  },
  {
    // On AWS operators sign in on Cognito's own pages (authorization code with PKCE, TOTP required,
    // threat protection); this is the local runner's stand-in, against its operator store.
    id: 'AdminSignIn',
    method: 'POST',
    path: '/admin/api/session',
    entry: 'lambdas/handlers/admin-sign-in.ts',
    // The operator, and the failed sign-ins of the name: counted and locked by conditional updates, reset by a delete.
    access: { table: tableAccess({ items: { OPERATOR: ['DeleteItem', 'GetItem', 'UpdateItem'] } }), merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
    localOnly: true,
  },
  {
    id: 'AdminSession',
    method: 'GET',
    path: '/admin/api/session',
    entry: 'lambdas/handlers/admin-session.ts',
    access: { table: NO_TABLE_ACCESS, merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'viewer',
  },
  {
    id: 'AdminPayments',
    method: 'GET',
    path: '/admin/api/payments',
    entry: 'lambdas/handlers/admin-payments.ts',
    // By id, by order number (the lookup index) or by merchant and day (the search index, merchants listed when none is named).
    access: { table: tableAccess(ACCESS.paymentRead, ACCESS.paymentsByKey, ACCESS.merchantList, { indexes: ['search', 'lookup'] }), merchantSecrets: false, cursorSecret: true },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'viewer',
  },
  {
    // Before the payment detail: the local runner takes the first route that matches, API Gateway the most specific.
    id: 'AdminPaymentsCount',
    method: 'GET',
    path: '/admin/api/payments/count',
    entry: 'lambdas/handlers/admin-payments-count.ts',
    // The search index counted (Select COUNT), or the payments it names read and checked; one of the operator's slots held meanwhile.
    access: { table: tableAccess(ACCESS.paymentRead, ACCESS.paymentsByKey, ACCESS.merchantList, ACCESS.searchLease, { indexes: ['search', 'lookup'] }), merchantSecrets: false, cursorSecret: true },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'viewer',
    timeoutSeconds: 29,
  },
  {
    id: 'AdminPaymentsExport',
    method: 'GET',
    path: '/admin/api/payments/export',
    entry: 'lambdas/handlers/admin-payments-export.ts',
    access: { table: tableAccess(ACCESS.paymentRead, ACCESS.paymentsByKey, ACCESS.merchantList, ACCESS.searchLease, { indexes: ['search', 'lookup'] }), merchantSecrets: false, cursorSecret: true },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'viewer',
    timeoutSeconds: 29,
  },
  {
    id: 'AdminPaymentDetail',
    method: 'GET',
    path: '/admin/api/payments/{paymentId}',
    entry: 'lambdas/handlers/admin-payment-detail.ts',
    access: { table: tableAccess(ACCESS.paymentRead, ACCESS.auditHistory), merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'viewer',
  },
  {
    id: 'AdminPaymentAction',
    method: 'POST',
    path: '/admin/api/payments/{paymentId}/{action}',
    entry: 'lambdas/handlers/admin-payment-action.ts',
    access: { table: OPERATOR_MONEY_ACTION, merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'operator',
    acquirerWork: 'followUp',
  },
  {
    id: 'AdminPaymentCallbacks',
    method: 'GET',
    path: '/admin/api/payments/{paymentId}/callbacks',
    entry: 'lambdas/handlers/admin-payment-callbacks.ts',
    access: { table: tableAccess({ items: { PAYMENT: ['Query'] } }), merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'viewer',
  },
  {
    id: 'AdminCallbackResend',
    method: 'POST',
    path: '/admin/api/payments/{paymentId}/callbacks/{index}/resend',
    entry: 'lambdas/handlers/admin-callback-resend.ts',
    // A callback delivered at its first attempt has no record item yet: its resend puts one.
    access: { table: tableAccess({ items: { PAYMENT: ['PutItem', 'Query', 'UpdateItem'] } }, ACCESS.auditAppend), merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'operator',
  },
  {
    id: 'AdminCaptureQueue',
    method: 'GET',
    path: '/admin/api/capture-queue',
    entry: 'lambdas/handlers/admin-capture-queue.ts',
    // The queue names each payment's merchant: the directory, by the lookup index.
    access: { table: tableAccess({ items: { PAYMENT: ['BatchGetItem'] }, indexes: ['work'] }, ACCESS.merchantList), merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'viewer',
  },
  {
    id: 'AdminCaptureBulk',
    method: 'POST',
    path: '/admin/api/capture-queue/bulk',
    entry: 'lambdas/handlers/admin-capture-bulk.ts',
    access: { table: OPERATOR_MONEY_ACTION, merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'operator',
    acquirerWork: 'followUp',
  },
  {
    id: 'AdminMerchants',
    method: 'GET',
    path: '/admin/api/merchants',
    entry: 'lambdas/handlers/admin-merchants.ts',
    access: { table: tableAccess(ACCESS.merchantList), merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'viewer',
  },
  {
    id: 'AdminMerchantCreate',
    method: 'POST',
    path: '/admin/api/merchants',
    entry: 'lambdas/handlers/admin-merchant-create.ts',
    // A conditional put of the new merchant (read back for its audit entry); its secret created.
    access: { table: tableAccess({ items: { MERCHANT: ['GetItem', 'PutItem'] } }, ACCESS.auditAppend), merchantSecrets: 'write' },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'admin',
  },
  {
    id: 'AdminMerchantDetail',
    method: 'GET',
    path: '/admin/api/merchants/{merchantKey}',
    entry: 'lambdas/handlers/admin-merchant-detail.ts',
    access: { table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.auditHistory), merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'viewer',
  },
  {
    id: 'AdminMerchantUpdate',
    method: 'PUT',
    path: '/admin/api/merchants/{merchantKey}',
    entry: 'lambdas/handlers/admin-merchant-update.ts',
    access: { table: tableAccess({ items: { MERCHANT: ['GetItem', 'PutItem'] } }, ACCESS.auditAppend), merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'admin',
  },
  {
    id: 'AdminMerchantPassword',
    method: 'POST',
    path: '/admin/api/merchants/{merchantKey}/password',
    entry: 'lambdas/handlers/admin-merchant-password.ts',
    access: { table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.auditAppend), merchantSecrets: 'write' },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'admin',
  },
  {
    id: 'AdminMerchantWebhookSecret',
    method: 'POST',
    path: '/admin/api/merchants/{merchantKey}/webhook-secret',
    entry: 'lambdas/handlers/admin-merchant-webhook-secret.ts',
    access: { table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.webhookSecretRotation, ACCESS.auditAppend), merchantSecrets: 'write' },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'admin',
  },
  {
    id: 'AdminDeadCallbacks',
    method: 'GET',
    path: '/admin/api/merchants/{merchantKey}/callbacks/dead',
    entry: 'lambdas/handlers/admin-dead-callbacks.ts',
    access: { table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.paymentsByKey, { indexes: ['lookup'] }), merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'viewer',
  },
  {
    id: 'AdminDeadCallbacksResend',
    method: 'POST',
    path: '/admin/api/merchants/{merchantKey}/callbacks/resend-dead',
    entry: 'lambdas/handlers/admin-dead-callbacks-resend.ts',
    access: { table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.paymentsByKey, { items: { PAYMENT: ['UpdateItem'] }, indexes: ['lookup'] }, ACCESS.auditAppend), merchantSecrets: false },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'operator',
    // Up to RESEND_DEAD_LIMIT callbacks, two conditional writes each.
    timeoutSeconds: 29,
  },
  {
    id: 'AdminAudit',
    method: 'GET',
    path: '/admin/api/audit',
    entry: 'lambdas/handlers/admin-audit.ts',
    // Filtered by target, the log reads that target's history through the lookup index.
    access: { table: tableAccess({ items: { AUDIT: ['Query'] } }, ACCESS.auditHistory), merchantSecrets: false, cursorSecret: true },
    throttle: ADMIN_THROTTLE,
    auth: 'operator',
    role: 'viewer',
  },
];

/**
 * The routes the stack makes functions and API routes of: all but the local runner's own, and of
 * the acquirer-specific ones only those of the stage's acquirer.
 */
export const deployedRoutes = (routes: readonly RouteDefinition[] = ROUTES, acquirer: AcquirerName = 'sandbox'): RouteDefinition[] =>
  routes.filter((r) => !r.localOnly && (r.acquirer === undefined || r.acquirer === acquirer));

/** The routes the local runner serves: its own included, of the acquirer-specific ones those of its acquirer. */
export const localRoutes = (acquirer: AcquirerName, routes: readonly RouteDefinition[] = ROUTES): RouteDefinition[] =>
  routes.filter((r) => r.acquirer === undefined || r.acquirer === acquirer);

/** `POST /api/v1/session` — the API Gateway route key of a route. */
export const routeKey = (r: Pick<RouteDefinition, 'method' | 'path'>): string => `${r.method} ${r.path}`;

/** API Gateway's route key for every request no other route takes. */
export const FALLBACK_ROUTE_KEY = '$default';

/**
 * The function behind the `$default` route: the answer to every request no entry of ROUTES takes,
 * an unknown path (404) or a known path with another method (405 with `Allow`), in the error
 * envelope (ADR 0024). It is no method and path, so it is not in ROUTES; the stack gives it its
 * own function and route, the local runner hands it what it cannot match. Open to everyone (no
 * authorizer, also under /admin): it reads nothing and says only what the route table says.
 */
export interface FallbackRouteDefinition {
  readonly id: string;
  readonly entry: string;
  readonly access: RouteFields['access'];
  readonly throttle: RouteFields['throttle'];
  readonly memoryMb?: number;
  readonly timeoutSeconds?: number;
}

export const FALLBACK_ROUTE: FallbackRouteDefinition = {
  id: 'NotFound',
  entry: 'lambdas/handlers/not-found.ts',
  access: { table: NO_TABLE_ACCESS, merchantSecrets: false },
  // A wrong path is an integration mistake, never a payment flow; each answer costs an invocation,
  // so scanners and retry loops are held to a modest rate (above it API Gateway answers 429).
  throttle: { rateLimit: 20, burstLimit: 40 },
};

/** One spelling per path: percent-encoding normalized to upper-case hex (as the route table has it); a malformed escape stays as sent. */
export function canonicalPath(path: string): string {
  try {
    return encodeURI(decodeURI(path));
  } catch {
    return path;
  }
}

/** A route path as a matcher of canonical paths: literal segments as written, `{name}` any one segment (captured). */
export function pathPattern(path: string): { readonly pattern: RegExp; readonly params: readonly string[] } {
  const params: string[] = [];
  const source = path
    .split('/')
    .map((segment) => {
      const m = /^\{(\w+)\}$/.exec(segment);
      if (!m) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      params.push(m[1] as string);
      return '([^/]+)';
    })
    .join('/');
  return { pattern: new RegExp(`^${source}$`), params };
}

const decoded = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

/** Literal segments before parameters, segment by segment: the order API Gateway prefers routes in. */
const specificity = (path: string): number[] => path.split('/').map((segment) => (/^\{\w+\}$/.test(segment) ? 1 : 0));
const bySpecificity = (a: Pick<RouteDefinition, 'path'>, b: Pick<RouteDefinition, 'path'>): number => {
  const [x, y] = [specificity(a.path), specificity(b.path)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
};

/**
 * The routes whose path takes `path` (a canonical path, canonicalPath), by any method, the most
 * specific first; a parameter with `servedValues` takes only those values.
 */
export function routesAtPath<R extends Pick<RouteDefinition, 'path' | 'servedValues'>>(routes: readonly R[], path: string): R[] {
  return routes
    .filter((route) => {
      const { pattern, params } = pathPattern(route.path);
      const m = pattern.exec(path);
      if (!m) return false;
      return params.every((name, i) => {
        const values = route.servedValues?.[name];
        const value = decoded(m[i + 1] ?? '');
        return values === undefined || (value !== undefined && values.includes(value));
      });
    })
    .sort(bySpecificity);
}
