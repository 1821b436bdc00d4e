import { telemetry } from '../observability/telemetry';
import { ApiError, invalidRequest } from '../domain/errors';
import type { MerchantAmount } from '../domain/money';
import { encodeLinkToken, hashLinkSecret, linkSecretMatches } from '../domain/checkout-link';
import { createHmac } from 'node:crypto';
import type { MerchantSecrets } from '../ports/merchants';
import type { Checkout, Customer, Payment, SavedCard } from '../domain/payment';
import { expired } from '../domain/card';
import type { TokenVault } from '../ports/tokens';
import type { Clock } from '../ports/clock';
import type { Ids } from '../ports/ids';
import type { PaymentStore } from '../ports/payments';

const DEFAULT_SESSION_MINUTES = 60;

/**
 * A checkout session a merchant opens (protocol/merchant/session.ts reads it from the request): the
 * link's settings as the checkout keeps them, and what the session itself decides.
 */
export interface OpenSession
  extends Pick<Checkout, 'operation' | 'methods' | 'successUrl' | 'cancelUrl' | 'expiryUrl' | 'errorUrl' | 'urlTarget' | 'language' | 'recurringInit' | 'scheduleId' | 'billingAddress' | 'parameters' | 'customData'> {
  readonly order: { readonly number: string; readonly amount: MerchantAmount; readonly description: string };
  /** Offer to save the card (not when saved cards are offered). */
  readonly reqToken: boolean;
  /** Saved cards to offer: each must exist, be this merchant's and not be expired. */
  readonly cardTokens?: readonly string[];
  readonly customer: Customer;
  /** How long the link accepts a payment; an hour unless given. */
  readonly lifetimeMinutes?: number;
}

export interface CreateSessionDeps {
  readonly store: PaymentStore;
  readonly tokens: TokenVault;
  readonly clock: Clock;
  readonly ids: Ids;
}

export interface CreateSessionResult {
  /** The path segment of the checkout link: /auth/<linkToken>. */
  readonly linkToken: string;
  readonly paymentId: string;
}

/**
 * The saved cards a session offers: each token must exist, belong to this merchant (205005) and
 * not be expired (205006).
 */
async function savedCardsOf(tokens: TokenVault, merchantKey: string, list: readonly string[], now: Date): Promise<SavedCard[]> {
  const found = new Map((await tokens.findCardTokens(list)).map((t) => [t.token, t]));
  return list.map((token) => {
    const t = found.get(token);
    if (!t || t.merchantKey !== merchantKey) throw new ApiError('CARD_TOKEN_INVALID');
    if (expired(t.card.expMonth, t.card.expYear, now)) throw new ApiError('CARD_TOKEN_EXPIRED');
    return { token, brand: t.card.brand, last4: t.card.mask.slice(-4), expMonth: t.card.expMonth, expYear: t.card.expYear };
  });
}

/** Opens a checkout: a payment in status prepare carrying its link's settings, in one write. */
export async function createSession(
  deps: CreateSessionDeps,
  merchantKey: string,
  session: OpenSession,
  replayable?: ReplayableLink,
): Promise<CreateSessionResult> {
  // A run after one that made the session but died before answering: that session, before any
  // check that may have changed its mind since (a saved card expired in between).
  if (replayable?.earlierRun) {
    const made = await deps.store.findPayment(replayable.paymentId);
    if (made?.checkout && linkSecretMatches(replayable.secret, made.checkout.secretHash)) return { linkToken: encodeLinkToken(made.paymentId, replayable.secret), paymentId: made.paymentId };
  }
  await refuseMintedOrderNumber(deps.store, merchantKey, session.order.number);
  const now = deps.clock.now();
  const lifetimeMinutes = session.lifetimeMinutes ?? DEFAULT_SESSION_MINUTES;
  const createdAt = now.toISOString();
  const paymentId = replayable?.paymentId ?? deps.ids.paymentId();
  const secret = replayable?.secret ?? deps.ids.linkSecret();
  const { recurringInit, cardTokens, customer, order } = session;
  const savedCards = cardTokens ? await savedCardsOf(deps.tokens, merchantKey, cardTokens, now) : undefined;

  const checkout: Checkout = {
    secretHash: hashLinkSecret(secret),
    operation: session.operation,
    methods: session.methods,
    successUrl: session.successUrl,
    cancelUrl: session.cancelUrl,
    expiryUrl: session.expiryUrl,
    errorUrl: session.errorUrl,
    urlTarget: session.urlTarget,
    language: session.language,
    // req_token is ignored when card_token is given (seed 2.1).
    reqToken: session.reqToken && !cardTokens,
    savedCards,
    recurringInit,
    scheduleId: session.scheduleId,
    billingAddress: session.billingAddress,
    given: { name: Boolean(customer.name), email: Boolean(customer.email), country: Boolean(session.billingAddress?.country) },
    parameters: session.parameters,
    customData: session.customData,
    expiresAt: new Date(now.getTime() + lifetimeMinutes * 60_000).toISOString(),
  };
  const payment: Payment = {
    paymentId,
    merchantKey,
    status: 'prepare',
    order: {
      number: order.number,
      amount: order.amount.literal,
      amountMinor: order.amount.amountMinor,
      currency: order.amount.currency,
      description: order.description,
    },
    customer,
    createdAt,
    updatedAt: createdAt,
    checkout,
    transactions: [],
    ...(recurringInit ? { recurringInit, scheduleId: session.scheduleId } : {}),
    ...(session.customData ? { customData: session.customData } : {}),
  };
  try {
    await deps.store.createPayment(payment);
    telemetry.sessionCreated();
  } catch (e) {
    if (!replayable || (e as Error).name !== 'ConditionalCheckFailedException') throw e;
    // The same Idempotency-Key and body again: the same link, if it is still the one first made.
    const first = await deps.store.findPayment(paymentId);
    if (!first?.checkout || !linkSecretMatches(secret, first.checkout.secretHash)) throw new ApiError('DUPLICATE_REQUEST');
  }
  telemetry.paymentInContext(paymentId, merchantKey);
  return { linkToken: encodeLinkToken(paymentId, secret), paymentId };
}

/** A payment id (every id this service issues is a UUID) at the start of a longer text. */
const PAYMENT_ID_PREFIX = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})./i;

/**
 * The protocol concatenates signed fields without separators, so the hash the customer holds after
 * paying (return parameters and callbacks sign payment_id + order fields) is also the hash of a
 * session whose `order.number` is that payment id followed by the order number, with the same
 * amount, currency and description: anyone who paid once could open checkout links in the
 * merchant's name. Such an order number — one of this merchant's payment ids and more — is refused
 * (one read, only for order numbers shaped like that).
 */
async function refuseMintedOrderNumber(store: PaymentStore, merchantKey: string, orderNumber: string): Promise<void> {
  const prefix = PAYMENT_ID_PREFIX.exec(orderNumber)?.[1];
  if (!prefix) return;
  const payment = await store.findPayment(prefix.toLowerCase());
  if (payment && payment.merchantKey === merchantKey) throw invalidRequest([{ path: 'order.number', message: ORDER_NUMBER_STARTS_WITH_PAYMENT_ID }]);
}

export const ORDER_NUMBER_STARTS_WITH_PAYMENT_ID = 'This value is not valid: it must not start with a payment_id.';

/** The payment id and link secret of a session created under an Idempotency-Key: the same every run. */
export interface ReplayableLink {
  readonly paymentId: string;
  readonly secret: Buffer;
  /** An earlier run under the key ended without an answer: it may have made the session. */
  readonly earlierRun?: boolean;
}

/**
 * Derived from the request's transaction id and the merchant's password (which never leaves
 * Secrets Manager), so a replay rebuilds the same link while only the secret's hash is stored.
 */
export async function replayableLink(deps: { readonly secrets: MerchantSecrets }, merchantKey: string, transId: string): Promise<ReplayableLink | undefined> {
  const password = await deps.secrets.passwordOf(merchantKey);
  if (!password) return undefined;
  return { paymentId: transId, secret: createHmac('sha256', password).update(`checkout-link\n${transId}`).digest().subarray(0, 18) };
}

/**
 * The link token of a session first made under an Idempotency-Key, rebuilt for a replay of its
 * answer (the answer is kept without it: the link's secret is never stored). A password rotated
 * since makes another secret: when the session is still there to tell, that is refused as a
 * duplicate rather than answered with a link that does not open it.
 */
export async function replayedLinkToken(deps: { readonly secrets: MerchantSecrets; readonly store: PaymentStore }, merchantKey: string, transId: string): Promise<string> {
  const link = await replayableLink(deps, merchantKey, transId);
  if (!link) throw new ApiError('DUPLICATE_REQUEST');
  const made = await deps.store.findPayment(link.paymentId);
  if (made?.checkout && !linkSecretMatches(link.secret, made.checkout.secretHash)) throw new ApiError('DUPLICATE_REQUEST');
  return encodeLinkToken(link.paymentId, link.secret);
}
