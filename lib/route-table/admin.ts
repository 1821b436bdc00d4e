/** The operators' portal: its page, the local sign-in, and the admin API behind the operator authorizer. */
import { ACCESS, NO_TABLE_ACCESS, tableAccess } from '../table-access';
import { operatorRoute, portalRoute, type RouteDefinition } from './route';

/** An operator's capture, release, void or refund (one or in bulk), written to the audit log. */
const OPERATOR_MONEY_ACTION = tableAccess(ACCESS.paymentChange, ACCESS.acquirerFollowUps, ACCESS.auditAppend);
/** By id, by order number (the lookup index) or by merchant and day (the search index, merchants listed when none is named). */
const PAYMENT_SEARCH = tableAccess(ACCESS.paymentRead, ACCESS.paymentsByKey, ACCESS.merchantList, { indexes: ['search', 'lookup'] });
/** The search index counted (Select COUNT) or read, or the payments it names read and checked; one of the operator's slots held meanwhile. */
const BOUNDED_SEARCH = tableAccess(ACCESS.paymentRead, ACCESS.paymentsByKey, ACCESS.merchantList, ACCESS.searchLease, { indexes: ['search', 'lookup'] });

export const ADMIN_ROUTES: readonly RouteDefinition[] = [
  portalRoute('AdminPortal', 'GET /admin', 'admin-portal', { table: NO_TABLE_ACCESS }),
  // On AWS operators sign in on Cognito's own pages (authorization code with PKCE, TOTP required,
  // threat protection); this is the local runner's stand-in, against its operator store: the
  // operator, and the failed sign-ins of the name, counted and locked by conditional updates, reset by a delete.
  portalRoute('AdminSignIn', 'POST /admin/api/session', 'admin-sign-in', { table: tableAccess({ items: { OPERATOR: ['DeleteItem', 'GetItem', 'UpdateItem'] } }) }, { localOnly: true }),
  operatorRoute('viewer', 'AdminSession', 'GET /admin/api/session', 'admin-session', { table: NO_TABLE_ACCESS }),
  operatorRoute('viewer', 'AdminPayments', 'GET /admin/api/payments', 'admin-payments', { table: PAYMENT_SEARCH, cursorSecret: true }),
  // Before the payment detail: the local runner takes the first route that matches, API Gateway the most specific.
  operatorRoute('viewer', 'AdminPaymentsCount', 'GET /admin/api/payments/count', 'admin-payments-count', { table: BOUNDED_SEARCH, cursorSecret: true }, { timeoutSeconds: 29 }),
  operatorRoute('viewer', 'AdminPaymentsExport', 'GET /admin/api/payments/export', 'admin-payments-export', { table: BOUNDED_SEARCH, cursorSecret: true }, { timeoutSeconds: 29 }),
  operatorRoute('viewer', 'AdminPaymentDetail', 'GET /admin/api/payments/{paymentId}', 'admin-payment-detail', { table: tableAccess(ACCESS.paymentRead, ACCESS.auditHistory) }),
  operatorRoute('operator', 'AdminPaymentAction', 'POST /admin/api/payments/{paymentId}/{action}', 'admin-payment-action', { table: OPERATOR_MONEY_ACTION }, { acquirerWork: 'followUp' }),
  operatorRoute('viewer', 'AdminPaymentCallbacks', 'GET /admin/api/payments/{paymentId}/callbacks', 'admin-payment-callbacks', { table: tableAccess({ items: { PAYMENT: ['Query'] } }) }),
  // A callback delivered at its first attempt has no record item yet: its resend puts one.
  operatorRoute('operator', 'AdminCallbackResend', 'POST /admin/api/payments/{paymentId}/callbacks/{index}/resend', 'admin-callback-resend', {
    table: tableAccess({ items: { PAYMENT: ['PutItem', 'Query', 'UpdateItem'] } }, ACCESS.auditAppend),
  }),
  // The queue names each payment's merchant: the directory, by the lookup index.
  operatorRoute('viewer', 'AdminCaptureQueue', 'GET /admin/api/capture-queue', 'admin-capture-queue', { table: tableAccess({ items: { PAYMENT: ['BatchGetItem'] }, indexes: ['work'] }, ACCESS.merchantList) }),
  operatorRoute('operator', 'AdminCaptureBulk', 'POST /admin/api/capture-queue/bulk', 'admin-capture-bulk', { table: OPERATOR_MONEY_ACTION }, { acquirerWork: 'followUp' }),
  operatorRoute('viewer', 'AdminMerchants', 'GET /admin/api/merchants', 'admin-merchants', { table: tableAccess(ACCESS.merchantList) }),
  // A conditional put of the new merchant (read back for its audit entry); its secret created.
  operatorRoute('admin', 'AdminMerchantCreate', 'POST /admin/api/merchants', 'admin-merchant-create', {
    table: tableAccess({ items: { MERCHANT: ['GetItem', 'PutItem'] } }, ACCESS.auditAppend),
    merchantSecrets: 'write',
  }),
  operatorRoute('viewer', 'AdminMerchantDetail', 'GET /admin/api/merchants/{merchantKey}', 'admin-merchant-detail', { table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.auditHistory) }),
  operatorRoute('admin', 'AdminMerchantUpdate', 'PUT /admin/api/merchants/{merchantKey}', 'admin-merchant-update', { table: tableAccess({ items: { MERCHANT: ['GetItem', 'PutItem'] } }, ACCESS.auditAppend) }),
  operatorRoute('admin', 'AdminMerchantPassword', 'POST /admin/api/merchants/{merchantKey}/password', 'admin-merchant-password', {
    table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.auditAppend),
    merchantSecrets: 'write',
  }),
  operatorRoute('admin', 'AdminMerchantWebhookSecret', 'POST /admin/api/merchants/{merchantKey}/webhook-secret', 'admin-merchant-webhook-secret', {
    table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.webhookSecretRotation, ACCESS.auditAppend),
    merchantSecrets: 'write',
  }),
  operatorRoute('viewer', 'AdminDeadCallbacks', 'GET /admin/api/merchants/{merchantKey}/callbacks/dead', 'admin-dead-callbacks', {
    table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.paymentsByKey, { indexes: ['lookup'] }),
  }),
  // Up to RESEND_DEAD_LIMIT callbacks, two conditional writes each.
  operatorRoute(
    'operator',
    'AdminDeadCallbacksResend',
    'POST /admin/api/merchants/{merchantKey}/callbacks/resend-dead',
    'admin-dead-callbacks-resend',
    { table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.paymentsByKey, { items: { PAYMENT: ['UpdateItem'] }, indexes: ['lookup'] }, ACCESS.auditAppend) },
    { timeoutSeconds: 29 },
  ),
  // Filtered by target, the log reads that target's history through the lookup index.
  operatorRoute('viewer', 'AdminAudit', 'GET /admin/api/audit', 'admin-audit', { table: tableAccess({ items: { AUDIT: ['Query'] } }, ACCESS.auditHistory), cursorSecret: true }),
];
