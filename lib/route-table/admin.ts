/** The operators' portal: its page, the local sign-in, and the admin API behind the operator authorizer. */
import { ADMIN_API } from '../admin-api';
import { ACCESS, NO_TABLE_ACCESS, tableAccess } from '../table-access';
import { operatorRoute, portalRoute, type RouteDefinition } from './route';

/** An operator's capture, release, void or refund (one or in bulk), written to the audit log. */
const OPERATOR_MONEY_ACTION = tableAccess(ACCESS.paymentChange, ACCESS.acquirerFollowUps, ACCESS.auditAppend);
/**
 * By id, by order number (the lookup index) or by merchant and day (the keys-only search index,
 * merchants listed when none is named); the payments it names read by key, a status search's too.
 */
const PAYMENT_SEARCH = tableAccess(ACCESS.paymentRead, ACCESS.paymentsByKey, ACCESS.merchantList, { indexes: ['searchKeys', 'lookup'] });
/** The search index counted (Select COUNT) or read, or the payments it names read and checked; one of the operator's slots held meanwhile. */
const BOUNDED_SEARCH = tableAccess(ACCESS.paymentRead, ACCESS.paymentsByKey, ACCESS.merchantList, ACCESS.searchLease, { indexes: ['searchKeys', 'lookup'] });

/** The disputes view and its export: the month's chargebacks and each merchant's chargeback rate. */
const DISPUTES_READ = tableAccess(ACCESS.disputesRead, ACCESS.merchantList);

export const ADMIN_ROUTES: readonly RouteDefinition[] = [
  portalRoute('AdminPortal', 'GET /admin', 'admin-portal', { table: NO_TABLE_ACCESS }),
  // On AWS operators sign in on Cognito's own pages (authorization code with PKCE, TOTP required,
  // threat protection); this is the local runner's stand-in, against its operator store: the
  // operator, and the failed sign-ins of the name, counted and locked by conditional updates, reset by a delete;
  // every answer audited (unknown names' failures counted per hour, under OPERATOR#*).
  portalRoute('AdminSignIn', ADMIN_API.AdminSignIn, 'admin-sign-in', { table: tableAccess({ items: { OPERATOR: ['DeleteItem', 'GetItem', 'UpdateItem'] } }, ACCESS.auditAppend) }, { localOnly: true }),
  operatorRoute('viewer', 'AdminSession', ADMIN_API.AdminSession, 'admin-session', { table: NO_TABLE_ACCESS }),
  // The portal's "Sign out", recorded in the audit log (the token itself runs out at its hour).
  operatorRoute('viewer', 'AdminSignOut', ADMIN_API.AdminSignOut, 'admin-sign-out', { table: tableAccess(ACCESS.auditAppend) }),
  operatorRoute('viewer', 'AdminPayments', ADMIN_API.AdminPayments, 'admin-payments', { table: PAYMENT_SEARCH, cursorSecret: true }),
  // Before the payment detail: the local runner takes the first route that matches, API Gateway the most specific.
  operatorRoute('viewer', 'AdminPaymentsCount', ADMIN_API.AdminPaymentsCount, 'admin-payments-count', { table: BOUNDED_SEARCH, cursorSecret: true }, { timeoutSeconds: 29 }),
  operatorRoute('viewer', 'AdminPaymentsExport', ADMIN_API.AdminPaymentsExport, 'admin-payments-export', { table: BOUNDED_SEARCH, cursorSecret: true }, { timeoutSeconds: 29 }),
  // The payment, its audit history and its merchant's name (the portal shows merchants by name).
  operatorRoute('viewer', 'AdminPaymentDetail', ADMIN_API.AdminPaymentDetail, 'admin-payment-detail', { table: tableAccess(ACCESS.paymentRead, ACCESS.auditHistory, { items: { MERCHANT: ['GetItem'] } }) }),
  operatorRoute('operator', 'AdminPaymentAction', ADMIN_API.AdminPaymentAction, 'admin-payment-action', { table: OPERATOR_MONEY_ACTION }, { acquirerWork: 'followUp' }),
  operatorRoute('viewer', 'AdminPaymentCallbacks', ADMIN_API.AdminPaymentCallbacks, 'admin-payment-callbacks', { table: tableAccess({ items: { PAYMENT: ['Query'] } }) }),
  // A callback delivered at its first attempt has no record item yet: its resend puts one.
  operatorRoute('operator', 'AdminCallbackResend', ADMIN_API.AdminCallbackResend, 'admin-callback-resend', {
    table: tableAccess({ items: { PAYMENT: ['PutItem', 'Query', 'UpdateItem'] } }, ACCESS.auditAppend),
  }),
  // The queue names each payment's merchant: the directory, by the lookup index.
  operatorRoute('viewer', 'AdminCaptureQueue', ADMIN_API.AdminCaptureQueue, 'admin-capture-queue', { table: tableAccess({ items: { PAYMENT: ['BatchGetItem'] }, indexes: ['work'] }, ACCESS.merchantList) }),
  operatorRoute('operator', 'AdminCaptureBulk', ADMIN_API.AdminCaptureBulk, 'admin-capture-bulk', { table: OPERATOR_MONEY_ACTION }, { acquirerWork: 'followUp' }),
  operatorRoute('viewer', 'AdminMerchants', ADMIN_API.AdminMerchants, 'admin-merchants', { table: tableAccess(ACCESS.merchantList) }),
  // A conditional put of the new merchant (read back for its audit entry); its secret created.
  operatorRoute('admin', 'AdminMerchantCreate', ADMIN_API.AdminMerchantCreate, 'admin-merchant-create', {
    table: tableAccess({ items: { MERCHANT: ['GetItem', 'PutItem'] } }, ACCESS.accountRead, ACCESS.auditAppend),
    merchantSecrets: 'write',
  }),
  operatorRoute('viewer', 'AdminMerchantDetail', ADMIN_API.AdminMerchantDetail, 'admin-merchant-detail', { table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.auditHistory) }),
  // The account a merchant is linked to must exist: read by key.
  operatorRoute('admin', 'AdminMerchantUpdate', ADMIN_API.AdminMerchantUpdate, 'admin-merchant-update', { table: tableAccess({ items: { MERCHANT: ['GetItem', 'PutItem'] } }, ACCESS.accountRead, ACCESS.auditAppend) }),
  operatorRoute('admin', 'AdminMerchantPassword', ADMIN_API.AdminMerchantPassword, 'admin-merchant-password', {
    table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.auditAppend),
    merchantSecrets: 'write',
  }),
  operatorRoute('admin', 'AdminMerchantWebhookSecret', ADMIN_API.AdminMerchantWebhookSecret, 'admin-merchant-webhook-secret', {
    table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.webhookSecretRotation, ACCESS.auditAppend),
    merchantSecrets: 'write',
  }),
  operatorRoute('viewer', 'AdminDeadCallbacks', ADMIN_API.AdminDeadCallbacks, 'admin-dead-callbacks', {
    table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.paymentsByKey, { indexes: ['lookup'] }),
  }),
  // Up to RESEND_DEAD_LIMIT callbacks, two conditional writes each.
  operatorRoute(
    'operator',
    'AdminDeadCallbacksResend',
    ADMIN_API.AdminDeadCallbacksResend,
    'admin-dead-callbacks-resend',
    { table: tableAccess(ACCESS.merchantSettingsRead, ACCESS.paymentsByKey, { items: { PAYMENT: ['UpdateItem'] }, indexes: ['lookup'] }, ACCESS.auditAppend) },
    { timeoutSeconds: 29 },
  ),
  // The acquirer accounts (the lookup index, then the items), the merchants named to show their links.
  operatorRoute('viewer', 'AdminAccounts', ADMIN_API.AdminAccounts, 'admin-accounts', { table: tableAccess(ACCESS.accountList, ACCESS.merchantList) }),
  // A conditional put of the new account, its password put in its own secret (created), an audit entry.
  operatorRoute('admin', 'AdminAccountCreate', ADMIN_API.AdminAccountCreate, 'admin-account-create', { table: tableAccess({ items: { ACCOUNT: ['PutItem'] } }, ACCESS.auditAppend), accountSecrets: 'write' }),
  // Read, then a put guarded by its last change; a new password put first.
  operatorRoute('admin', 'AdminAccountUpdate', ADMIN_API.AdminAccountUpdate, 'admin-account-update', { table: tableAccess({ items: { ACCOUNT: ['GetItem', 'PutItem'] } }, ACCESS.auditAppend), accountSecrets: 'write' }),
  // A month's chargebacks (one partition) and the month before, the settled payments of the merchants charged back in each, the merchants named.
  // Counting a month's days not kept yet may take a while, as a count does: it stops before the end and answers a part.
  operatorRoute('viewer', 'AdminDisputes', ADMIN_API.AdminDisputes, 'admin-disputes', { table: DISPUTES_READ }, { timeoutSeconds: 29 }),
  // The export is the month's chargebacks alone: no payments read.
  operatorRoute('viewer', 'AdminDisputesExport', ADMIN_API.AdminDisputesExport, 'admin-disputes-export', { table: tableAccess({ items: { DISPUTE: ['Query'] } }, ACCESS.merchantList) }),
  // Filtered by target, the log reads that target's history through the lookup index.
  operatorRoute('viewer', 'AdminAudit', ADMIN_API.AdminAudit, 'admin-audit', { table: tableAccess({ items: { AUDIT: ['Query'] } }, ACCESS.auditHistory), cursorSecret: true }),
  // The same reads as the log's page, a bounded part per request (X-Next-Cursor names the next).
  operatorRoute('viewer', 'AdminAuditExport', ADMIN_API.AdminAuditExport, 'admin-audit-export', { table: tableAccess({ items: { AUDIT: ['Query'] } }, ACCESS.auditHistory), cursorSecret: true }),
];
