import { SignJWT } from 'jose';
import { LOCAL_AUDIENCE, LOCAL_ISSUER, type LocalOperatorAuthenticator } from '../../lambdas/adapters/local/operator-auth';
import type { AuditEntry } from '../../lambdas/ports/operators';
import type { OperatorRole } from '../../lib/operator-roles';
import type { PaymentAction } from '../../lambdas/use-cases/admin/operator-actions';
import type { ActionOutcome } from '../../lambdas/protocol/admin/actions';
import type { ResendOutcome } from '../../lambdas/use-cases/callback-log';
import type { CallbackView } from '../../lambdas/protocol/admin/callbacks';
import type { DisputesView } from '../../lambdas/protocol/admin/disputes';
import type { HttpAnswer } from './http';
import type { TestService } from './service';

/**
 * The operators' side of the service: a local operator (the stand-in for a Cognito user), its
 * sign-in over HTTP, and calls to the admin API with its bearer token.
 */
export interface OperatorCredentials {
  readonly username: string;
  readonly password: string;
}

let seeded = 0;

/**
 * Creates a local operator, as `npm start` does from ADMIN_USER / ADMIN_PASSWORD (an admin, unless
 * the test asks for a weaker role).
 */
export async function seedOperator(service: TestService, username = `operator-${++seeded}`, password = 'correct horse battery staple', role: OperatorRole = 'admin'): Promise<OperatorCredentials> {
  await (service.deps.operators as LocalOperatorAuthenticator).createOperator(username, password, role);
  return { username, password };
}

export interface SignInAnswer {
  readonly token: string;
  readonly expires_in: number;
  readonly username: string;
}

/** GET /admin/api/session: who the token's operator is, their role and the routes it allows. */
export interface SessionAnswer {
  readonly username: string;
  readonly role: OperatorRole;
  readonly routes: string[];
}

/** POST /admin/api/session, as the portal's sign-in form sends it (the local runner only). */
export const signInRequest = (service: TestService, body: unknown): Promise<HttpAnswer<SignInAnswer>> => service.post<SignInAnswer>('/admin/api/session', body);

/** Signs in and returns the token; fails the test unless the service answers 200. */
export async function signIn(service: TestService, operator: OperatorCredentials): Promise<string> {
  const res = await signInRequest(service, operator);
  if (res.status !== 200) throw new Error(`sign-in refused: ${res.status} ${res.text}`);
  return res.json.token;
}

/**
 * A token signed with the local operator key but with the claims chosen by the test (an expired
 * one, another issuer…): what a forger who somehow had the key, or an old browser tab, would send.
 */
export async function operatorToken(
  key: Uint8Array,
  options: { username?: string; expiresAt?: Date; issuedAt?: Date; issuer?: string; audience?: string; claims?: Record<string, unknown> } = {},
): Promise<string> {
  const issuedAt = options.issuedAt ?? new Date();
  return new SignJWT({ username: options.username ?? 'someone', token_use: 'id', ...options.claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(options.username ?? 'someone')
    .setIssuer(options.issuer ?? LOCAL_ISSUER)
    .setAudience(options.audience ?? LOCAL_AUDIENCE)
    .setIssuedAt(Math.floor(issuedAt.getTime() / 1000))
    .setExpirationTime(Math.floor((options.expiresAt ?? new Date(Date.now() + 3600_000)).getTime() / 1000))
    .sign(key);
}

/** One admin API call with an optional bearer token (GET without a body, else JSON). */
export function adminRequest<T = unknown>(service: TestService, method: 'GET' | 'POST' | 'PUT', path: string, token?: string, body?: unknown): Promise<HttpAnswer<T>> {
  return service.request<T>({
    method,
    path,
    headers: {
      accept: 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** A payment as the admin API lists it (the fields the tests look at). */
export interface AdminPayment {
  readonly payment_id: string;
  readonly merchant_key: string;
  readonly order_number: string;
  readonly amount: string;
  readonly currency: string;
  readonly description: string;
  readonly customer?: { readonly name?: string; readonly email?: string };
  readonly status: string;
  readonly reason?: string;
  readonly created_at: string;
  readonly authorization_expires_at?: string;
  readonly captured_amount?: string;
  readonly refunded_amount?: string;
  readonly left_to_refund?: string;
  readonly actions: PaymentAction[];
}

export interface PaymentDetailAnswer {
  readonly payment: AdminPayment;
  readonly transactions: { transId: string; type: string; status: string; amountMinor: number; at: string; actor?: string; reason?: string }[];
  readonly audit: AuditEntry[];
}

/** A dead callback as the admin API lists it. */
export interface DeadCallback {
  readonly payment_id: string;
  readonly index: number;
  readonly trans_id: string;
  readonly type: string;
  readonly status: string;
  readonly dead_at: string;
  readonly attempt_count: number;
  readonly last_error?: string;
}

const query = (params: Record<string, string | undefined>): string => {
  const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString();
  return q ? `?${q}` : '';
};

/** The admin API as one signed-in operator calls it. Answers are returned as they come (no throwing). */
export function adminApi(service: TestService, token: string) {
  const get = <T>(path: string) => adminRequest<T>(service, 'GET', path, token);
  return {
    searchPayments: (params: Record<string, string | undefined> = {}) => get<{ payments: AdminPayment[]; cursor?: string }>(`/admin/api/payments${query(params)}`),
    countPayments: (params: Record<string, string | undefined> = {}) => get<{ total: number; complete: boolean; cursor?: string }>(`/admin/api/payments/count${query(params)}`),
    exportPayments: (params: Record<string, string | undefined> = {}) => get<undefined>(`/admin/api/payments/export${query(params)}`),
    createMerchant: (body: unknown) => adminRequest<{ merchant_key: string; password: string; webhook_secret: string }>(service, 'POST', '/admin/api/merchants', token, body),
    rotatePassword: (merchantKey: string) => adminRequest<{ merchant_key: string; password: string }>(service, 'POST', `/admin/api/merchants/${encodeURIComponent(merchantKey)}/password`, token, {}),
    rotateWebhookSecret: (merchantKey: string) =>
      adminRequest<{ merchant_key: string; webhook_secret: string; previous_valid_until?: string }>(service, 'POST', `/admin/api/merchants/${encodeURIComponent(merchantKey)}/webhook-secret`, token, {}),
    payment: (paymentId: string) => get<PaymentDetailAnswer>(`/admin/api/payments/${encodeURIComponent(paymentId)}`),
    act: (paymentId: string, action: PaymentAction | string, body: Record<string, unknown> = {}) =>
      adminRequest<ActionOutcome>(service, 'POST', `/admin/api/payments/${encodeURIComponent(paymentId)}/${action}`, token, body),
    captureQueue: () => get<{ payments: AdminPayment[] }>('/admin/api/capture-queue'),
    bulk: (action: string, paymentIds: unknown) => adminRequest<{ results: ActionOutcome[] }>(service, 'POST', '/admin/api/capture-queue/bulk', token, { action, payment_ids: paymentIds }),
    merchants: () => get<{ merchants: Record<string, unknown>[] }>('/admin/api/merchants'),
    merchant: (merchantKey: string) => get<{ merchant_key: string; settings: Record<string, unknown>; audit: AuditEntry[] }>(`/admin/api/merchants/${encodeURIComponent(merchantKey)}`),
    changeMerchant: (merchantKey: string, body: unknown) =>
      adminRequest<{ merchant_key: string; settings: Record<string, unknown> }>(service, 'PUT', `/admin/api/merchants/${encodeURIComponent(merchantKey)}`, token, body),
    audit: (cursor?: string) => get<{ entries: AuditEntry[]; cursor?: string }>(`/admin/api/audit${query({ cursor })}`),
    searchAudit: (params: Record<string, string | undefined> = {}) => get<{ entries: AuditEntry[]; cursor?: string }>(`/admin/api/audit${query(params)}`),
    exportAudit: (params: Record<string, string | undefined> = {}) => get<undefined>(`/admin/api/audit/export${query(params)}`),
    signOut: () => adminRequest<{ signed_out: boolean }>(service, 'POST', '/admin/api/sign-out', token, {}),
    session: () => get<SessionAnswer>('/admin/api/session'),
    callbacks: (paymentId: string) => get<{ callbacks: CallbackView[] }>(`/admin/api/payments/${encodeURIComponent(paymentId)}/callbacks`),
    resendCallback: (paymentId: string, index: number | string) =>
      adminRequest<{ payment_id: string; index: number; outcome: ResendOutcome }>(service, 'POST', `/admin/api/payments/${encodeURIComponent(paymentId)}/callbacks/${index}/resend`, token, {}),
    deadCallbacks: (merchantKey: string, cursor?: string) =>
      get<{ merchant_key: string; callbacks: DeadCallback[]; cursor?: string }>(`/admin/api/merchants/${encodeURIComponent(merchantKey)}/callbacks/dead${query({ cursor })}`),
    disputes: (params: Record<string, string | undefined> = {}) => get<DisputesView>(`/admin/api/disputes${query(params)}`),
    exportDisputes: (params: Record<string, string | undefined> = {}) => get<undefined>(`/admin/api/disputes/export${query(params)}`),
    resendDeadCallbacks: (merchantKey: string) =>
      adminRequest<{ merchant_key: string; queued: number; more: boolean }>(service, 'POST', `/admin/api/merchants/${encodeURIComponent(merchantKey)}/callbacks/resend-dead`, token, {}),
  };
}

export type AdminApi = ReturnType<typeof adminApi>;
