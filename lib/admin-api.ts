/**
 * The operators' API by route id, each as its route key (`METHOD /path`). The route table
 * (lib/route-table/admin.ts) declares its admin routes with these, and the portal's browser script
 * (lambdas/admin-portal/client) calls them and reads the routes an operator may call by them, so
 * no path is spelled twice. Constants only: this module is bundled into the browser.
 */
export const ADMIN_API = {
  AdminSignIn: 'POST /admin/api/session',
  AdminSession: 'GET /admin/api/session',
  AdminSignOut: 'POST /admin/api/sign-out',
  AdminPayments: 'GET /admin/api/payments',
  AdminPaymentsCount: 'GET /admin/api/payments/count',
  AdminPaymentsExport: 'GET /admin/api/payments/export',
  AdminPaymentDetail: 'GET /admin/api/payments/{paymentId}',
  AdminPaymentAction: 'POST /admin/api/payments/{paymentId}/{action}',
  AdminPaymentCallbacks: 'GET /admin/api/payments/{paymentId}/callbacks',
  AdminCallbackResend: 'POST /admin/api/payments/{paymentId}/callbacks/{index}/resend',
  AdminCaptureQueue: 'GET /admin/api/capture-queue',
  AdminCaptureBulk: 'POST /admin/api/capture-queue/bulk',
  AdminMerchants: 'GET /admin/api/merchants',
  AdminMerchantCreate: 'POST /admin/api/merchants',
  AdminMerchantDetail: 'GET /admin/api/merchants/{merchantKey}',
  AdminMerchantUpdate: 'PUT /admin/api/merchants/{merchantKey}',
  AdminMerchantPassword: 'POST /admin/api/merchants/{merchantKey}/password',
  AdminMerchantWebhookSecret: 'POST /admin/api/merchants/{merchantKey}/webhook-secret',
  AdminDeadCallbacks: 'GET /admin/api/merchants/{merchantKey}/callbacks/dead',
  AdminDeadCallbacksResend: 'POST /admin/api/merchants/{merchantKey}/callbacks/resend-dead',
  AdminAudit: 'GET /admin/api/audit',
  AdminAuditExport: 'GET /admin/api/audit/export',
  AdminAccounts: 'GET /admin/api/acquirer-accounts',
  AdminAccountCreate: 'POST /admin/api/acquirer-accounts',
  AdminAccountUpdate: 'PUT /admin/api/acquirer-accounts/{accountId}',
  AdminDisputes: 'GET /admin/api/disputes',
  AdminDisputesExport: 'GET /admin/api/disputes/export',
} as const satisfies Readonly<Record<string, `${'GET' | 'POST' | 'PUT'} /admin/api/${string}`>>;

export type AdminRouteId = keyof typeof ADMIN_API;

/** The route's method and path, as its key names them. */
export function adminRoute(id: AdminRouteId): { readonly method: 'GET' | 'POST' | 'PUT'; readonly path: string } {
  const key = ADMIN_API[id];
  const space = key.indexOf(' ');
  return { method: key.slice(0, space) as 'GET' | 'POST' | 'PUT', path: key.slice(space + 1) };
}
