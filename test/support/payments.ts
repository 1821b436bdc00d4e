import { randomUUID } from 'node:crypto';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { key } from '../../lambdas/adapters/dynamodb/keys';
import { transactionOf } from '../../lambdas/adapters/dynamodb/payment-items';
import { sandboxLedger, type SandboxLedgerRecord } from '../../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import { ERRORS, type ErrorName } from '../../lambdas/domain/errors';
import type { Payment, Transaction } from '../../lambdas/domain/payment';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import type { PaymentStatusResponse } from '../../lambdas/protocol/merchant/status';
import { validSessionBody, type Json } from './fixtures';
import type { HttpAnswer } from './http';
import { paymentIdOf } from './links';
import type { TestService } from './service';

/**
 * Payments made the way they are made in production: a signed session request, then the
 * customer's form post on the hosted page, over HTTP. The merchant API calls after the payment
 * (recurring, void, refund, retry, capture, status) are signed as client libraries sign them.
 */

/** The sandbox's test card 4111 1111 1111 1111 with one of its expiries (docs/sandbox.md). */
export const TEST_PAN = '4111111111111111';

export interface OrderInput {
  readonly number: string;
  readonly amount: string;
  readonly currency: string;
  readonly description: string;
}

export const newOrder = (overrides: Partial<OrderInput> = {}): OrderInput => ({
  number: `order-${randomUUID().slice(0, 8)}`,
  amount: '25.00',
  currency: 'USD',
  description: 'Gift box',
  ...overrides,
});

export interface SessionOptions {
  readonly order?: Partial<OrderInput>;
  readonly recurringInit?: boolean | string;
  readonly scheduleId?: string;
  readonly reqToken?: boolean | string;
  readonly cardToken?: string | readonly string[];
  /** Any other fields of the session request. */
  readonly extra?: Json;
}

export interface Session {
  readonly paymentId: string;
  readonly redirectUrl: string;
  /** /auth/<token>: where the page is shown and posted. */
  readonly path: string;
  readonly order: OrderInput;
}

/** The session request body (unsigned). */
export function sessionBody(merchant: MerchantCredentials, options: SessionOptions = {}): Json {
  const order = newOrder(options.order);
  return validSessionBody(merchant.merchant_key, {
    order,
    ...(options.recurringInit !== undefined ? { recurring_init: options.recurringInit } : {}),
    ...(options.scheduleId !== undefined ? { schedule_id: options.scheduleId } : {}),
    ...(options.reqToken !== undefined ? { req_token: options.reqToken } : {}),
    ...(options.cardToken !== undefined ? { card_token: options.cardToken } : {}),
    ...options.extra,
  });
}

/** POST /api/v1/session, signed; fails the test unless the service answers 200. */
export async function openSession(service: TestService, merchant: MerchantCredentials, options: SessionOptions = {}): Promise<Session> {
  const body = sessionBody(merchant, options);
  const res = await service.signedPost<{ redirect_url: string }>('/api/v1/session', body, merchant.password);
  if (res.status !== 200) throw new Error(`session refused: ${res.status} ${res.text}`);
  const redirectUrl = res.json.redirect_url;
  return { paymentId: paymentIdOf(redirectUrl), redirectUrl, path: new URL(redirectUrl).pathname, order: body.order as OrderInput };
}

export interface PageForm {
  /** Expiry of the test card, e.g. '01/38'; ignored when savedCard is given without a number. */
  readonly card?: string;
  readonly number?: string;
  readonly savedCard?: string;
  readonly cvv?: string;
  readonly holder?: string;
  /** Other form fields (method, email, browser_*). */
  readonly fields?: Record<string, string>;
}

/** The customer's form post on the hosted page (no browser, no script: the fields as the form sends them). */
export function submitPage(service: TestService, session: Pick<Session, 'path'>, form: PageForm): Promise<HttpAnswer> {
  const fields: Record<string, string> = form.savedCard !== undefined && form.card === undefined
    ? { saved_card: form.savedCard }
    : {
        ...(form.savedCard !== undefined ? { saved_card: form.savedCard } : {}),
        card_number: form.number ?? TEST_PAN,
        card_expiry: form.card ?? '01/38',
        card_cvv: form.cvv ?? '123',
        card_holder: form.holder ?? 'John Doe',
      };
  return service.request({
    path: session.path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, ...form.fields }).toString(),
  });
}

/** The customer presses Close on the page (after a decline this makes the decline final). */
export function closePage(service: TestService, session: Pick<Session, 'path'>): Promise<HttpAnswer> {
  return service.request({ path: session.path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'close=1' });
}

export interface PaidPayment extends Session {
  /** The page's answer to the form post (303 to success_url after an approval). */
  readonly page: HttpAnswer;
  /** What the status endpoint says right after. */
  readonly status: PaymentStatusResponse;
}

export interface PaidPaymentOptions extends SessionOptions, PageForm {
  /** Close the page after paying: a decline is then final (the status reads decline). */
  readonly close?: boolean;
}

/**
 * Creates a session and pays it on the page. The card defaults to 01/38 (approved); pass
 * `savedCard` (and no `card`) to pay with a saved card.
 */
export async function paidPayment(service: TestService, merchant: MerchantCredentials, options: PaidPaymentOptions = {}): Promise<PaidPayment> {
  const session = await openSession(service, merchant, options);
  const page = await submitPage(service, session, options);
  if (page.status >= 500) throw new Error(`page failed: ${page.status} ${page.text}`);
  if (options.close) {
    const closed = await closePage(service, session);
    if (closed.status >= 400) throw new Error(`close failed: ${closed.status} ${closed.text}`);
  }
  const status = await statusOf(service, merchant, session.paymentId);
  return { ...session, page, status };
}

/** POST /api/v1/payment/status by payment_id, signed. */
export async function statusOf(service: TestService, merchant: MerchantCredentials, paymentId: string): Promise<PaymentStatusResponse> {
  const res = await service.signedPost<PaymentStatusResponse>('/api/v1/payment/status', { merchant_key: merchant.merchant_key, payment_id: paymentId }, merchant.password);
  if (res.status !== 200) throw new Error(`status refused: ${res.status} ${res.text}`);
  return res.json;
}

/** A signed merchant API call (the path decides which fields are signed, test/support/sign.ts). */
export const merchantCall = <T = Json>(service: TestService, merchant: MerchantCredentials, path: string, body: Json): Promise<HttpAnswer<T>> =>
  service.signedPost<T>(path, { merchant_key: merchant.merchant_key, ...body }, merchant.password);

export const voidOf = <T = Json>(service: TestService, merchant: MerchantCredentials, paymentId: string) =>
  merchantCall<T>(service, merchant, '/api/v1/payment/void', { payment_id: paymentId });

export const refundOf = <T = Json>(service: TestService, merchant: MerchantCredentials, paymentId: string, amount: string | number) =>
  merchantCall<T>(service, merchant, '/api/v1/payment/refund', { payment_id: paymentId, amount });

export const captureOf = <T = Json>(service: TestService, merchant: MerchantCredentials, paymentId: string, amount: string | number) =>
  merchantCall<T>(service, merchant, '/api/v1/payment/capture', { payment_id: paymentId, amount });

export const retryOf = <T = Json>(service: TestService, merchant: MerchantCredentials, paymentId: string) =>
  merchantCall<T>(service, merchant, '/api/v1/payment/retry', { payment_id: paymentId });

export interface RecurringInput {
  readonly initTransId: string;
  readonly token: string;
  readonly order?: Partial<Omit<OrderInput, 'currency'>>;
  readonly scheduleId?: string;
}

/** The body of POST /api/v1/payment/recurring (unsigned; no currency: the chain's is used). */
export function recurringBody(merchant: MerchantCredentials, input: RecurringInput): Json {
  const { currency: _currency, ...order } = newOrder({ amount: '10.00', description: 'Monthly box', ...input.order });
  return {
    merchant_key: merchant.merchant_key,
    recurring_init_trans_id: input.initTransId,
    recurring_token: input.token,
    ...(input.scheduleId !== undefined ? { schedule_id: input.scheduleId } : {}),
    order,
    customer: { name: 'John Doe', email: 'john@example.com' },
  };
}

export const recurringOf = <T = Json>(service: TestService, merchant: MerchantCredentials, input: RecurringInput, path = '/api/v1/payment/recurring') =>
  service.signedPost<T>(path, recurringBody(merchant, input), merchant.password);

/** A recurring chain: a recurring_init session paid with 01/38 (or the card given). */
export async function recurringChain(
  service: TestService,
  merchant: MerchantCredentials,
  options: PaidPaymentOptions = {},
): Promise<PaidPayment & { readonly token: string; readonly initTransId: string }> {
  const paid = await paidPayment(service, merchant, { recurringInit: true, ...options });
  const { recurring_token: token, recurring_init_trans_id: initTransId } = paid.status;
  if (!token || !initTransId) throw new Error(`no recurring chain: ${JSON.stringify(paid.status)}`);
  return { ...paid, token, initTransId };
}

/**
 * The payment as stored: its state item (the whole history of the payment is on it) over its
 * details item, storage attributes and all, as one object (the payment id is the key's).
 */
export async function storedPayment(service: TestService, paymentId: string): Promise<Payment> {
  return (await storedPaymentItems(service.deps.db, service.backend.tableName, paymentId)) as unknown as Payment;
}

/** A payment's two items merged, read consistently; throws when the state item is missing. */
export async function storedPaymentItems(db: DynamoDBDocumentClient, tableName: string, paymentId: string): Promise<Record<string, unknown>> {
  const [state, details] = await Promise.all(
    [key.payment(paymentId), key.paymentDetails(paymentId)].map(async (k) => (await db.send(new GetCommand({ TableName: tableName, Key: k, ConsistentRead: true }))).Item),
  );
  if (!state) throw new Error(`payment ${paymentId} not stored`);
  // Transactions as the domain names their fields (the item stores them under short names, payment-items.ts).
  return { paymentId, ...details, ...state, ...(Array.isArray(state.transactions) ? { transactions: state.transactions.map(transactionOf) } : {}) };
}

export const transactionsOf = async (service: TestService, paymentId: string): Promise<readonly Transaction[]> =>
  (await storedPayment(service, paymentId)).transactions;

export interface Operation {
  readonly transId: string;
  /** The statuses the operation went through, e.g. ['waiting', 'success'] for a refund. */
  readonly statuses: readonly string[];
  /** Its latest entry: the outcome. */
  readonly outcome: Transaction;
}

/**
 * The payment's history read as operations. The history is a log: an operation that is answered
 * later (a refund, a challenge) is written when it starts (waiting) and again, under the same
 * trans id, when it ends.
 */
export function operationsOf(transactions: readonly Transaction[]): Operation[] {
  const byId = new Map<string, Transaction[]>();
  for (const t of transactions) byId.set(t.transId, [...(byId.get(t.transId) ?? []), t]);
  return [...byId].map(([transId, entries]) => ({ transId, statuses: entries.map((e) => e.status), outcome: entries[entries.length - 1] as Transaction }));
}

/** The sandbox acquirer's ledger entries (one per authorization, capture, void or refund it was asked for) of a payment. */
export async function ledgerOf(service: TestService, paymentId: string): Promise<(SandboxLedgerRecord & { idempotencyKey: string })[]> {
  return (await sandboxLedger(service.deps.db, service.backend.tableName, paymentId)).map((r) => ({ ...r, idempotencyKey: r.idempotency_key }));
}

/**
 * The envelope of a catalogued refusal (protocol.md §2). The documented code is written out in the
 * test; the message comes from the catalog, the one place that words it.
 */
export function refusal(code: number, name: ErrorName): { error_code: number; error_message: string; errors: never[] } {
  if (ERRORS[name].code !== code) throw new Error(`${name} is ${ERRORS[name].code} in the catalog, not ${code}`);
  return { error_code: code, error_message: ERRORS[name].message, errors: [] };
}

/** The answer to a request that fails validation (400): one entry per message, in the order given. */
export const invalidRequest = (...messages: string[]) => ({
  error_code: 0,
  error_message: 'Request data is invalid.',
  errors: messages.map((message) => ({ error_code: 100000, error_message: message })),
});

export const HASH_NOT_VALID = invalidRequest('hash: Hash is not valid.');

/** `YYYY-MM-DD hh:mm:ss` of an instant, in UTC (protocol.md §3). */
export const protocolDateOf = (d: Date | string): string => new Date(d).toISOString().slice(0, 19).replace('T', ' ');

/**
 * The customer at the sandbox's challenge after a 3-D Secure pay answered `paid` (its redirect): the
 * page seen, then confirmed with the code; the page carries where to come back in a hidden field,
 * from its own address. Answers the challenge's answer (a 303 to /auth/{token}/complete).
 */
export async function answerChallenge(service: TestService, paid: HttpAnswer<unknown>): Promise<HttpAnswer> {
  const challenge = new URL(String(paid.headers.location), service.baseUrl);
  await service.request({ method: 'GET', path: `${challenge.pathname}${challenge.search}` });
  return service.request({
    path: challenge.pathname,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ code: '123456', decision: 'confirm', return: challenge.searchParams.get('return') ?? '' }).toString(),
  });
}

