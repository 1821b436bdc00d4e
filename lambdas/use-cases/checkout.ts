import { decodeLinkToken, linkSecretMatches } from '../domain/checkout-link';
import { telemetry } from '../observability/telemetry';
import { logger } from '../observability/logger';
import { methodsOffered, missingCustomerFields, type CustomerField, type PaymentMethod } from '../domain/checkout-methods';
import type { StageWallets } from '../domain/wallet-settings';
import { containsCardNumber, expired, summarize, validateCard, type CardField, type CardInput, type CardSummary, type ValidCard } from '../domain/card';
import { readWalletInput, walletRefusal, walletSummary, type WalletInput, type WalletSummary } from '../domain/wallet';
import { isCountryCode, isEmail } from '../domain/contact';
import { claimAttempt, closeLink as closeDeclinedLink, customerAfterPay, hasLink, sessionBillingAddress, sessionCustomer, type SavedCard, type BillingAddress, type Customer, type LinkPayment, type Payment } from '../domain/payment';
import type { Acquirer, AcquirerOutcome, BrowserInfo, PaymentInstrument } from '../ports/acquirer';
import type { Clock } from '../ports/clock';
import type { Ids } from '../ports/ids';
import type { Merchant, MerchantDirectory, MerchantSecrets } from '../ports/merchants';
import type { PaymentStore } from '../ports/payments';
import type { AccountReader } from '../ports/acquirer-accounts';
import { PAID, maxDeclinesOf, reconcileAt, recordOutcome, type AttemptRef, type AttemptStage, type Policy } from './record-outcome';
import { authorizeOrUnknown, merchantOf } from './payment-attempt';
import { linkWallets } from './link-wallets';
import { returnUrl } from './return-url';

export { returnHash, returnUrl } from './return-url';
import type { TokenVault } from '../ports/tokens';

export interface CheckoutDeps {
  readonly store: PaymentStore;
  readonly merchants: MerchantDirectory;
  readonly secrets: MerchantSecrets;
  readonly acquirer: Acquirer;
  readonly tokens: TokenVault;
  readonly policy: Policy;
  readonly clock: Clock;
  readonly ids: Ids;
  /** A linked merchant's acquirer account, for its Google Pay parameters (use-cases/link-wallets.ts). */
  readonly accountReader: AccountReader;
}


export type FieldProblems = Partial<Record<CardField | CustomerField | 'method' | 'savedCard' | 'wallet', string>>;

/** What the customer sees on the link. The page renders exactly one of these. */
export type LinkView =
  | { readonly kind: 'not-found' }
  | { readonly kind: 'expired'; readonly payment: LinkPayment; readonly merchant: Merchant }
  | { readonly kind: 'paid'; readonly payment: LinkPayment; readonly merchant: Merchant }
  | { readonly kind: 'closed'; readonly payment: LinkPayment; readonly merchant: Merchant }
  | { readonly kind: 'processing'; readonly payment: LinkPayment; readonly merchant: Merchant }
  | { readonly kind: 'action'; readonly payment: LinkPayment; readonly merchant: Merchant; readonly url: string }
  | {
      readonly kind: 'form';
      readonly payment: LinkPayment;
      readonly merchant: Merchant;
      readonly methods: readonly PaymentMethod[];
      readonly ask: readonly CustomerField[];
      readonly problems?: FieldProblems;
      /** What the customer typed, to fill the form again; never the card number or CVV. */
      readonly values?: { readonly expiry?: string; readonly holder?: string; readonly email?: string; readonly country?: string };
      readonly declineReason?: string;
      readonly attemptsLeft: number;
    };

/** Where the customer goes next, and in which browsing context. */
export interface Navigation {
  readonly kind: 'navigate';
  readonly url: string;
  /** url_target of the session; undefined = this frame. */
  readonly target?: string;
  readonly why: 'success' | 'cancel' | 'expired' | 'action';
  /** Whose page the customer leaves: a page shown inside the merchant's frame obeys its framing rules. */
  readonly merchant?: Merchant;
  /** The payment the customer leaves (its language, and what a success screen names). */
  readonly payment?: LinkPayment;
}

export type CheckoutResult = LinkView | Navigation;


async function load(deps: CheckoutDeps, token: string): Promise<{ payment: LinkPayment; merchant: Merchant } | undefined> {
  const decoded = decodeLinkToken(token);
  if (!decoded) return undefined;
  const payment = await deps.store.findPayment(decoded.paymentId);
  if (!payment || !hasLink(payment) || !linkSecretMatches(decoded.secret, payment.checkout.secretHash)) return undefined;
  telemetry.paymentInContext(payment.paymentId, payment.merchantKey);
  return { payment, merchant: await merchantOf(deps, payment) };
}

/** The state of a link as the customer finds it; no writes. */
function viewOf(payment: LinkPayment, merchant: Merchant, now: Date, extra: { problems?: FieldProblems; declineReason?: string } = {}): LinkView {
  if (PAID.includes(payment.status) || payment.paidAt) return { kind: 'paid', payment, merchant };
  if (payment.action && (payment.status === '3ds' || payment.status === 'redirect')) return { kind: 'action', payment, merchant, url: payment.action.url };
  if (payment.inFlight) return { kind: 'processing', payment, merchant };
  if ((payment.declines ?? 0) >= maxDeclinesOf(merchant) || payment.linkClosed?.why === 'declines' || payment.linkClosed?.why === 'customer') {
    return { kind: 'closed', payment, merchant };
  }
  if (Date.parse(payment.checkout.expiresAt) <= now.getTime()) return { kind: 'expired', payment, merchant };
  const methods = methodsOffered(payment.checkout.methods, merchant.preRouting, payment.order);
  const method = methods[0];
  // Asked: what the session did not give, on every attempt (not only until the first one filled it).
  const ask = method ? missingCustomerFields(method, sessionCustomer(payment), sessionBillingAddress(payment)) : [];
  // After an attempt the name and the contact details typed are filled in again; card number, CVV
  // and expiry never are.
  const typedHolder = payment.attempt && payment.card && !payment.checkout.savedCards?.length ? payment.card.holder : undefined;
  const values = {
    ...(typedHolder ? { holder: typedHolder } : {}),
    ...(ask.includes('email') && payment.customer?.email ? { email: payment.customer.email } : {}),
    ...(ask.includes('country') && payment.billingAddress?.country ? { country: payment.billingAddress.country } : {}),
  };
  return {
    kind: 'form',
    payment,
    merchant,
    methods,
    ask,
    ...(Object.keys(values).length ? { values } : {}),
    attemptsLeft: maxDeclinesOf(merchant) - (payment.declines ?? 0),
    ...(extra.problems ? { problems: extra.problems } : {}),
    ...(extra.declineReason ? { declineReason: extra.declineReason } : (payment.status === 'decline' && payment.reason ? { declineReason: payment.reason } : {})),
  };
}

/** GET /auth/{token}: what the link shows. An expired link goes to expiry_url when there is one. */
async function openLinkInner(deps: CheckoutDeps, token: string): Promise<CheckoutResult> {
  const found = await load(deps, token);
  if (!found) return { kind: 'not-found' };
  telemetry.pageViewed();
  const view = viewOf(found.payment, found.merchant, deps.clock.now());
  if (view.kind === 'expired' && found.payment.checkout.expiryUrl) {
    return { kind: 'navigate', url: found.payment.checkout.expiryUrl, target: found.payment.checkout.urlTarget, why: 'expired', merchant: found.merchant, payment: found.payment };
  }
  return view;
}

export interface PayForm extends CardInput {
  readonly method?: string;
  /** A saved card's token, or 'new' / undefined for the card form. */
  readonly savedCard?: string;
  readonly email?: string;
  readonly country?: string;
}

export interface PayContext {
  /** Base URL of this service, for the acquirer's return address. */
  readonly baseUrl: string;
  readonly browser: BrowserInfo;
}

type FormView = Extract<LinkView, { kind: 'form' }>;

/** The contact details the page asked for (those the session did not give), checked; card and wallet forms alike. */
function validateContact(view: FormView, form: { readonly email?: string; readonly country?: string }, problems: FieldProblems): { email?: string; country?: string } {
  const email = form.email?.trim();
  const country = form.country?.trim().toUpperCase();
  // A card number pasted into the e-mail field must not become the customer's stored e-mail.
  if (view.ask.includes('email') && !(email && isEmail(email) && !containsCardNumber(email))) problems.email = 'email';
  if (view.ask.includes('country') && !(country && isCountryCode(country))) problems.country = 'country';
  return { ...(view.ask.includes('email') ? { email } : {}), ...(view.ask.includes('country') ? { country } : {}) };
}

function validateForm(view: FormView, form: PayForm, now: Date):
  | { ok: true; method: PaymentMethod; card: ValidCard | SavedCard; email?: string; country?: string }
  | { ok: false; problems: FieldProblems } {
  const problems: FieldProblems = {};
  const method = (view.methods.length === 1 ? view.methods[0] : view.methods.find((m) => m === form.method)) as PaymentMethod | undefined;
  if (!method) problems.method = 'method';
  const saved = form.savedCard && form.savedCard !== 'new' ? view.payment.checkout.savedCards?.find((c) => c.token === form.savedCard) : undefined;
  if (form.savedCard && form.savedCard !== 'new' && !saved) problems.method = 'method';
  const checked = saved ? { card: saved } : validateCard(form, now);
  if ('errors' in checked) Object.assign(problems, checked.errors);
  const contact = validateContact(view, form, problems);
  if (Object.keys(problems).length || !method || 'errors' in checked) return { ok: false, problems };
  return { ok: true, method, card: checked.card, ...contact };
}

/** The link as it stands when it cannot take a payment now (paid, processing, closed…); an expired one goes to expiry_url when there is one. */
function notPayable(found: { payment: LinkPayment; merchant: Merchant }, view: Exclude<LinkView, FormView>): CheckoutResult {
  const { payment, merchant } = found;
  return view.kind === 'expired' && payment.checkout.expiryUrl
    ? { kind: 'navigate', url: payment.checkout.expiryUrl, target: payment.checkout.urlTarget, why: 'expired', merchant, payment }
    : view;
}

/** The link a pay form posts to, when it can take a payment now; otherwise what to answer instead. */
async function payableLink(deps: CheckoutDeps, token: string): Promise<{ found: { payment: LinkPayment; merchant: Merchant }; view: FormView; now: Date } | { answer: CheckoutResult }> {
  const found = await load(deps, token);
  if (!found) return { answer: { kind: 'not-found' } };
  const now = deps.clock.now();
  const view = viewOf(found.payment, found.merchant, now);
  if (view.kind !== 'form') return { answer: notPayable(found, view) };
  return { found, view, now };
}

/** One attempt as both forms make it: what it pays with, for the payment's record and for the acquirer. */
interface AttemptInput {
  readonly paidWith: { readonly card: CardSummary } | { readonly wallet: WalletSummary };
  readonly instrument: PaymentInstrument;
  readonly customer: Customer;
  /** A billing country typed on the page. */
  readonly typedBilling?: BillingAddress;
  readonly storeCredential: boolean;
}

/**
 * The steps every page attempt shares, whatever it pays with: the attempt is claimed with a
 * conditional write (status prepare, before the acquirer is called), so racing submissions can never
 * charge twice; the acquirer is called with the attempt's stable key (`<payment>.<attempt>`); its
 * answer is recorded with a second conditional write (settleAttempt).
 */
async function claimAndAuthorize(
  deps: CheckoutDeps,
  token: string,
  found: { payment: LinkPayment; merchant: Merchant },
  input: AttemptInput,
  ctx: PayContext,
  now: Date,
): Promise<CheckoutResult> {
  const { payment, merchant } = found;
  const attempt = (payment.attempt ?? 0) + 1;
  const transId = deps.ids.transId();
  const idempotencyKey = `${payment.paymentId}.${attempt}`;
  const ref: AttemptRef = { attempt, transId, idempotencyKey, authorizeOnly: merchant.dms };
  const claim = await deps.store.apply(
    payment.paymentId,
    claimAttempt(payment, {
      ref,
      ...input.paidWith,
      customer: input.customer,
      ...(ctx.browser.ip ? { customerIp: ctx.browser.ip } : {}),
      ...(input.typedBilling ? { billingAddress: input.typedBilling } : {}),
      recheck: reconcileAt(deps.policy, now),
      ...(merchant.acquirerAccount ? { acquirerAccount: merchant.acquirerAccount } : {}),
    }, now),
  );
  // Another submission got there first: show what the link is now. A claim whose answer was lost
  // (the SDK tried again and found it done) carries this request's own transaction id: it is ours.
  const ours = claim.applied || claim.payment?.inFlight?.transId === transId;
  if (!ours) return claim.payment && hasLink(claim.payment) ? viewOf(claim.payment, merchant, deps.clock.now()) : { kind: 'not-found' };
  const claimed = claim.payment!;
  const { customer } = input;

  const outcome = await authorizeOrUnknown(deps.acquirer, {
    idempotencyKey,
    paymentId: payment.paymentId,
    amountMinor: payment.order.amountMinor,
    currency: payment.order.currency,
    capture: !merchant.dms,
    instrument: input.instrument,
    browser: ctx.browser,
    returnUrl: `${ctx.baseUrl}/auth/${token}/complete`,
    storeCredential: input.storeCredential,
    recurring: false,
    attempt,
    payer: { ...(input.typedBilling ?? payment.checkout.billingAddress), ...(customer.email ? { email: customer.email } : {}), ...(customer.name ? { name: customer.name } : {}) },
    description: payment.order.description,
    ...(claimed.acquirerAccount ? { account: claimed.acquirerAccount } : {}),
  });
  return settleAttempt(deps, claimed as LinkPayment, merchant, ref, outcome, 'request');
}

/**
 * POST /auth/{token}: one attempt to pay. The attempt is claimed with a conditional write (status
 * prepare, before the acquirer is called), so racing submissions can never charge twice; the
 * acquirer's answer is recorded with a second conditional write.
 */
async function payInner(deps: CheckoutDeps, token: string, form: PayForm, ctx: PayContext): Promise<CheckoutResult> {
  const link = await payableLink(deps, token);
  if ('answer' in link) return link.answer;
  const { found, view, now } = link;
  const valid = validateForm(view, form, now);
  if (!valid.ok) {
    // What the customer typed is filled in again, except anything shaped like a card number.
    const echo = (v: string | undefined, max: number) => (v === undefined || containsCardNumber(v) ? undefined : v.slice(0, max));
    const values = { expiry: echo(form.expiry, 7), holder: echo(form.holder, 64), email: echo(form.email, 255), country: echo(form.country, 2) };
    return { ...view, problems: valid.problems, values };
  }

  const { payment } = found;
  const savedCard = 'token' in valid.card ? await deps.tokens.findCardToken(valid.card.token) : undefined;
  if ('token' in valid.card && (!savedCard || savedCard.merchantKey !== payment.merchantKey)) return { ...view, problems: { method: 'method' } };
  // A link lives up to 12 hours: the saved card may have expired since the session was created.
  if (savedCard && expired(savedCard.card.expMonth, savedCard.card.expYear, now)) return { ...view, problems: { savedCard: 'savedCard' } };
  const customer: Customer = customerAfterPay(sessionCustomer(payment), { holder: 'holder' in valid.card ? valid.card.holder : undefined, email: valid.email });
  return claimAndAuthorize(deps, token, found, {
    paidWith: { card: savedCard ? savedCard.card : summarize(valid.card as ValidCard) },
    instrument: savedCard
      ? { kind: 'stored', storedCredentialRef: savedCard.storedCredentialRef, summary: savedCard.card }
      : { kind: 'card', card: valid.card as ValidCard },
    customer,
    ...(valid.country ? { typedBilling: { ...(payment.checkout.billingAddress ?? {}), country: valid.country } } : {}),
    storeCredential: payment.checkout.reqToken || payment.checkout.recurringInit,
  }, ctx, now);
}

/** What the page posts when the customer pays with Apple Pay or Google Pay (docs/wallets.md). */
export interface WalletForm extends WalletInput {
  /** Asked by the page only when the session has none (the wallet's own contact details may fill them). */
  readonly email?: string;
  readonly country?: string;
}

/** A wallet payment's context: the page's, and what the stage runs the wallets with (checkout-page/wallets.ts pageWalletsOf). */
export interface WalletPayContext extends PayContext {
  readonly wallets: StageWallets;
}

/**
 * POST /auth/{token} with a wallet's payment token: one attempt to pay, through the same steps as a
 * card (claimAndAuthorize), for a session that offers this wallet. The payment is "virtual": no card
 * is stored, so a session that asks to keep the card (recurring_init, req_token) or a merchant that
 * captures later (DMS) is refused (domain/wallet.ts, `walletRefusal`), and the card form stays the
 * fallback. The token goes to the acquirer and nowhere else.
 */
async function payWithWalletInner(deps: CheckoutDeps, token: string, form: WalletForm, ctx: WalletPayContext): Promise<CheckoutResult> {
  const link = await payableLink(deps, token);
  if ('answer' in link) return link.answer;
  const { found, view, now } = link;
  const { payment, merchant } = found;
  const problems: FieldProblems = {};
  const read = readWalletInput(form);
  // One of the page's buttons: offered by the session, on for the merchant, runnable by the stage,
  // and for Google Pay with complete tokenization parameters (the same rule as the page's).
  const offered = read.ok && (await linkWallets(deps, ctx.wallets, payment, merchant)).offered.includes(read.payment.wallet);
  const refusal = walletRefusal(payment.checkout, merchant);
  if (!read.ok || !offered || refusal) problems.wallet = refusal ?? 'wallet';
  const contact = validateContact(view, form, problems);
  if (!read.ok || Object.keys(problems).length) return { ...view, problems };
  const wallet = read.payment;
  return claimAndAuthorize(deps, token, found, {
    paidWith: { wallet: walletSummary(wallet) },
    instrument: { kind: 'wallet', wallet },
    customer: customerAfterPay(sessionCustomer(payment), { email: contact.email }),
    ...(contact.country ? { typedBilling: { ...(payment.checkout.billingAddress ?? {}), country: contact.country } } : {}),
    storeCredential: false,
  }, ctx, now);
}

/**
 * Close on the page (a POST to the link with `close=1`). After a decline this makes the decline
 * final: the link closes and the held decline's callback is queued, in one write guarded by the
 * link being as it was read (an attempt started meanwhile wins); the customer goes to cancel_url
 * with the return parameters (protocol.md §4, §7). Before any decline nothing changes: the customer
 * just goes to cancel_url.
 */
async function closeLinkInner(deps: CheckoutDeps, token: string): Promise<CheckoutResult> {
  // A lost race (an attempt recorded meanwhile) is looked at again: that attempt's decline is then the one closed.
  for (let round = 0; ; round++) {
    const found = await load(deps, token);
    if (!found) return { kind: 'not-found' };
    const { payment, merchant } = found;
    const now = deps.clock.now();
    const view = viewOf(payment, merchant, now);
    if (view.kind !== 'form' || payment.status !== 'decline') {
      // Close on a link still open for payment: the customer gives up.
      if (view.kind === 'form') telemetry.paymentAbandoned();
      if (view.kind === 'form' || view.kind === 'closed' || view.kind === 'expired') return (await leaveForCancelUrl(deps, payment, merchant)) ?? view;
      return view;
    }
    const closed = await deps.store.apply(payment.paymentId, closeDeclinedLink(payment, 'customer', now));
    if (closed.applied) {
      telemetry.paymentAbandoned();
      return (await leaveForCancelUrl(deps, closed.payment as LinkPayment, merchant)) ?? viewOf(closed.payment as LinkPayment, merchant, now);
    }
    if (round + 1 >= CLOSE_ROUNDS) {
      const again = await load(deps, token);
      return again ? viewOf(again.payment, again.merchant, deps.clock.now()) : { kind: 'not-found' };
    }
  }
}

/** Tries of Close against attempts recorded at the same moment (each lost race means one was). */
const CLOSE_ROUNDS = 3;

/** To cancel_url (with the return parameters once a decline happened), when the session has one. */
async function leaveForCancelUrl(deps: Pick<CheckoutDeps, 'secrets'>, payment: LinkPayment, merchant: Merchant): Promise<Navigation | undefined> {
  const cancel = payment.checkout.cancelUrl;
  if (!cancel) return undefined;
  const url = payment.status === 'decline' ? await returnUrl(deps, payment, merchant, cancel) : cancel;
  return { kind: 'navigate', url, target: payment.checkout.urlTarget, why: 'cancel', merchant, payment };
}

/** GET /auth/{token}/complete: the customer is back from the challenge or redirect. */
async function completeActionInner(deps: CheckoutDeps, token: string): Promise<CheckoutResult> {
  const found = await load(deps, token);
  if (!found) return { kind: 'not-found' };
  const { payment, merchant } = found;
  const action = payment.action;
  // Nothing to complete: this is also where the processing page sends the customer once the
  // outcome is recorded (by the reconciler, or an earlier return), so it leads on as a payment does.
  if (!action || (payment.status !== '3ds' && payment.status !== 'redirect')) return afterSettlement(deps, payment, merchant);
  const outcome = await deps.acquirer.completeAction({ paymentId: payment.paymentId, idempotencyKey: action.idempotencyKey }).catch(
    (): AcquirerOutcome => ({ kind: 'unknown', acquirerRef: action.acquirerRef, reason: 'The acquirer did not answer.' }),
  );
  if (outcome.kind === 'action') return { kind: 'navigate', url: outcome.url, why: 'action' };
  return settleAttempt(deps, payment, merchant, { attempt: action.attempt, transId: action.transId, idempotencyKey: action.idempotencyKey, authorizeOnly: action.authorizeOnly }, outcome, 'action');
}

/**
 * Records the acquirer's answer for a page attempt and tells where the customer goes next. The page,
 * the challenge return and reconciliation can race; the guarded write lets only one record it.
 */
export async function settleAttempt(
  deps: CheckoutDeps,
  payment: LinkPayment,
  merchant: Merchant,
  ref: AttemptRef,
  outcome: AcquirerOutcome,
  from: AttemptStage,
): Promise<CheckoutResult> {
  // The acquirer may yet approve: the customer waits on the processing page (it polls our record of
  // the payment), never at cancel_url or error_url, which would read as "not paid" and invite a
  // second payment.
  if (outcome.kind === 'unknown') return { kind: 'processing', payment, merchant };
  try {
    const recorded = await recordOutcome(deps, payment, merchant, ref, outcome, 'sale', from);
    // Not written yet (an outage): the reconciler records it; the customer sees "processing".
    if (recorded.kind === 'deferred') return { kind: 'processing', payment, merchant };
    if (recorded.kind === 'lost') {
      const current = await deps.store.findPayment(payment.paymentId);
      // The payment waits on this attempt's challenge (this write's own, whose answer was lost, or
      // another's record of the same answer): the customer goes to it as if this write had been answered.
      if (outcome.kind === 'action' && current?.action?.attempt === ref.attempt) return { kind: 'navigate', url: outcome.url, why: 'action' };
      return current && hasLink(current) ? afterSettlement(deps, current, merchant) : { kind: 'not-found' };
    }
    if (outcome.kind === 'action') return { kind: 'navigate', url: outcome.url, why: 'action' };
    return afterSettlement(deps, recorded.payment as LinkPayment, merchant);
  } catch (e) {
    // The acquirer has answered: never an error page now; the reconciler records what is missing.
    logger.warn('recording an acquirer answer failed; left to reconciliation', { paymentId: payment.paymentId, error: e as Error });
    return outcome.kind === 'action' ? { kind: 'navigate', url: outcome.url, why: 'action' } : { kind: 'processing', payment, merchant };
  }
}

/** Where the customer goes once an attempt is recorded. */
async function afterSettlement(deps: Pick<CheckoutDeps, 'secrets' | 'clock'>, payment: LinkPayment, merchant: Merchant): Promise<CheckoutResult> {
  const target = payment.checkout.urlTarget;
  if (PAID.includes(payment.status)) {
    return { kind: 'navigate', url: await returnUrl(deps, payment, merchant, payment.checkout.successUrl), target, why: 'success', merchant, payment };
  }
  if (payment.status === 'decline' && (payment.declines ?? 0) >= maxDeclinesOf(merchant) && payment.checkout.cancelUrl) {
    return { kind: 'navigate', url: await returnUrl(deps, payment, merchant, payment.checkout.cancelUrl), target, why: 'cancel', merchant, payment };
  }
  return viewOf(payment, merchant, deps.clock.now());
}

/** Whether the link's attempt still waits for its outcome, as the processing page polls it. */
export type AttemptState = 'processing' | 'done';

/** An attempt whose outcome is not recorded: in flight, or waiting on its challenge or bank page. */
export const awaitsOutcome = (payment: LinkPayment): boolean =>
  !(PAID.includes(payment.status) || payment.paidAt) && Boolean(payment.inFlight || (payment.action && (payment.status === '3ds' || payment.status === 'redirect')));

/**
 * GET /auth/{token}/status: what the processing page polls. One read of our own record of the
 * payment, never the acquirer nor the merchant's settings, so a poll stays cheap however many
 * customers wait; once it says `done` the page goes to /complete, which leads on as a payment does.
 */
export async function attemptState(deps: Pick<CheckoutDeps, 'store'>, token: string): Promise<AttemptState | undefined> {
  const decoded = decodeLinkToken(token);
  if (!decoded) return undefined;
  const payment = await deps.store.findPayment(decoded.paymentId);
  if (!payment || !hasLink(payment) || !linkSecretMatches(decoded.secret, payment.checkout.secretHash)) return undefined;
  telemetry.paymentInContext(payment.paymentId, payment.merchantKey);
  return awaitsOutcome(payment) ? 'processing' : 'done';
}

/**
 * The challenge or bank page learns where the customer returns through the customer's browser:
 * its address gets `return=/auth/<token>/complete`. The acquirer (and the sandbox's ledger) never
 * hold the link token; only its secret's hash is stored anywhere.
 */
function withReturnPath(result: CheckoutResult, token: string): CheckoutResult {
  const add = (url: string) => {
    const u = new URL(url);
    u.searchParams.set('return', `/auth/${encodeURIComponent(token)}/complete`);
    return u.toString();
  };
  if (result.kind === 'navigate' && result.why === 'action') return { ...result, url: add(result.url) };
  if (result.kind === 'action') return { ...result, url: add(result.url) };
  return result;
}

/** GET /auth/{token}: what the link shows. An expired link goes to expiry_url when there is one. */
export async function openLink(deps: CheckoutDeps, token: string): Promise<CheckoutResult> {
  return withReturnPath(await openLinkInner(deps, token), token);
}

/** POST /auth/{token}: one attempt to pay (see payInner). */
export async function pay(deps: CheckoutDeps, token: string, form: PayForm, ctx: PayContext): Promise<CheckoutResult> {
  return withReturnPath(await payInner(deps, token, form, ctx), token);
}

/** POST /auth/{token} with a wallet's payment token (see payWithWalletInner). */
export async function payWithWallet(deps: CheckoutDeps, token: string, form: WalletForm, ctx: WalletPayContext): Promise<CheckoutResult> {
  return withReturnPath(await payWithWalletInner(deps, token, form, ctx), token);
}

/** GET /auth/{token}/complete: the customer is back from the challenge or redirect. */
export async function completeAction(deps: CheckoutDeps, token: string): Promise<CheckoutResult> {
  return withReturnPath(await completeActionInner(deps, token), token);
}

/** Close on the page (see closeLinkInner). */
export async function closeLink(deps: CheckoutDeps, token: string): Promise<CheckoutResult> {
  return withReturnPath(await closeLinkInner(deps, token), token);
}
