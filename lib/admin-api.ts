/**
 * The operators' API, as the route table declares it: method and path by route id. The portal's
 * browser script (lambdas/admin-portal/client) builds its calls and reads the operator's allowed
 * routes from here, so it spells no path of its own; test/unit/admin-portal-script.test.ts holds
 * these to the route table. Constants only: this module is bundled into the browser.
 */
export const ADMIN_API = {
  AdminSignIn: { method: 'POST', path: '/admin/api/session' },
  AdminSession: { method: 'GET', path: '/admin/api/session' },
  AdminPayments: { method: 'GET', path: '/admin/api/payments' },
  AdminPaymentsCount: { method: 'GET', path: '/admin/api/payments/count' },
  AdminPaymentsExport: { method: 'GET', path: '/admin/api/payments/export' },
  AdminPaymentDetail: { method: 'GET', path: '/admin/api/payments/{paymentId}' },
  AdminPaymentAction: { method: 'POST', path: '/admin/api/payments/{paymentId}/{action}' },
  AdminPaymentCallbacks: { method: 'GET', path: '/admin/api/payments/{paymentId}/callbacks' },
  AdminCallbackResend: { method: 'POST', path: '/admin/api/payments/{paymentId}/callbacks/{index}/resend' },
  AdminCaptureQueue: { method: 'GET', path: '/admin/api/capture-queue' },
  AdminCaptureBulk: { method: 'POST', path: '/admin/api/capture-queue/bulk' },
  AdminMerchants: { method: 'GET', path: '/admin/api/merchants' },
  AdminMerchantCreate: { method: 'POST', path: '/admin/api/merchants' },
  AdminMerchantDetail: { method: 'GET', path: '/admin/api/merchants/{merchantKey}' },
  AdminMerchantUpdate: { method: 'PUT', path: '/admin/api/merchants/{merchantKey}' },
  AdminMerchantPassword: { method: 'POST', path: '/admin/api/merchants/{merchantKey}/password' },
  AdminMerchantWebhookSecret: { method: 'POST', path: '/admin/api/merchants/{merchantKey}/webhook-secret' },
  AdminDeadCallbacks: { method: 'GET', path: '/admin/api/merchants/{merchantKey}/callbacks/dead' },
  AdminDeadCallbacksResend: { method: 'POST', path: '/admin/api/merchants/{merchantKey}/callbacks/resend-dead' },
  AdminAudit: { method: 'GET', path: '/admin/api/audit' },
} as const satisfies Readonly<Record<string, { readonly method: 'GET' | 'POST' | 'PUT'; readonly path: string }>>;

export type AdminRouteId = keyof typeof ADMIN_API;
export type AdminRoute = (typeof ADMIN_API)[AdminRouteId];

/** `METHOD /path`, as GET /admin/api/session lists the routes an operator's role may call. */
export const adminRouteKey = (id: AdminRouteId): string => `${ADMIN_API[id].method} ${ADMIN_API[id].path}`;
