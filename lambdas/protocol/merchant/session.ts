import * as z from 'zod/mini';
import { WALLETS_ON_PAGE, sessionMethodValues } from '../../domain/checkout-methods';
import { WALLET_RULES, isWallet } from '../../domain/wallet';
import { isCountryCode, isEmail, isLanguageCode } from '../../domain/contact';
import { invalidRequest, type FieldError } from '../../domain/errors';
import { CURRENCY_EXPONENT_SET, isKnownCurrency, parseAmount } from '../../domain/money';
import { ORDER_DESCRIPTION_CHARACTERS, ORDER_NUMBER_CHARACTERS } from '../../domain/payment';
import { RULE, fieldErrorsFrom, httpUrl, mergeFieldErrors, text } from '../../domain/validation';
import type { OpenSession } from '../../use-cases/create-session';

/**
 * POST /api/v1/session as merchants send it (protocol.md): the body's schema, the loose forms read
 * as their strict equivalents, the validation answers in the platform's order, the fields the hash
 * covers, and the command the use case takes.
 */

export const OPERATIONS = ['purchase'] as const;

const TWO_LETTER_STATE_COUNTRIES = new Set(['US', 'CA', 'AU', 'JP', 'IN']);
const CUSTOMER_NAME = /^[A-Za-z]+(?:[ .'-]+[A-Za-z]+)*\.?$/;
const LETTERS = /^[\p{L}]+(?:[ .'-]+[\p{L}]+)*\.?$/u;
const ADDRESS = /^[\p{L}\p{N}][\p{L}\p{N} ,./#'-]*$/u;
const ZIP = /^[A-Za-z0-9][A-Za-z0-9 -]*$/;
const PHONE = /^[0-9+()\- ]*$/;
const FRAME_NAME = /^[A-Za-z][\w-]{0,63}$/;
const CUSTOM_DATA_KEY = /^[A-Za-z0-9_-]{1,64}$/;

const orderSchema = z.object({
  number: text({ max: 255, pattern: ORDER_NUMBER_CHARACTERS }),
  amount: z.union([z.string(), z.number()], { error: (iss) => (iss.input === undefined || iss.input === null ? RULE.blank : RULE.invalid) }),
  currency: z.string().check(z.minLength(1, RULE.blank), z.regex(/^[A-Z]{3}$/, RULE.invalid), z.refine(isKnownCurrency, RULE.invalid)),
  description: text({ min: 2, max: 1024, pattern: ORDER_DESCRIPTION_CHARACTERS }),
});

const stringMap = (maxEntries: number, maxValue: number) =>
  z.record(z.string().check(z.regex(CUSTOM_DATA_KEY, RULE.invalid)), z.string().check(z.maxLength(maxValue, RULE.tooLong(maxValue)))).check(
    z.refine((r) => Object.keys(r).length <= maxEntries, RULE.tooMany(maxEntries)),
  );

/**
 * The keys in the order the platform lists its validation answers (its own invalid example:
 * operation, methods, order.number, order.amount, order.currency, order.description, cancel_url,
 * success_url); the rest after them.
 */
/**
 * `methods` may name `applepay` and `googlepay` only once the page shows their buttons
 * (WALLETS_ON_PAGE, docs/wallets.md); until then they are refused as any unknown method is.
 */
const sessionSchema = (walletsOnPage: boolean) => z.object({
  merchant_key: text({ max: 255 }),
  operation: z.enum(OPERATIONS, { error: (iss) => (iss.input === undefined || iss.input === '' ? RULE.blank : RULE.choice) }),
  methods: z.optional(
    z.array(z.string().check(z.minLength(1, RULE.blank), z.refine((m) => sessionMethodValues(walletsOnPage).includes(m), RULE.choice))).check(
      z.minLength(1, RULE.blank),
      z.maxLength(10, RULE.tooMany(10)),
    ),
  ),
  order: orderSchema,
  cancel_url: z.optional(httpUrl()),
  success_url: httpUrl(),
  expiry_url: z.optional(httpUrl()),
  error_url: z.optional(httpUrl()),
  url_target: z.optional(z.string().check(z.refine((t) => ['_blank', '_self', '_parent', '_top'].includes(t) || FRAME_NAME.test(t), RULE.invalid))),
  // The page's language (ISO 639-1). A language the page does not have yet falls back to the browser's.
  language: z.optional(z.string().check(z.refine(isLanguageCode, RULE.invalid))),
  req_token: z.optional(z.boolean()),
  card_token: z.optional(
    z.array(z.string().check(z.length(64, RULE.exactly(64)), z.regex(/^[A-Za-z0-9]+$/, RULE.invalid))).check(z.maxLength(10, RULE.tooMany(10))),
  ),
  recurring_init: z.optional(z.boolean()),
  schedule_id: z.optional(text({ max: 255, pattern: /^[A-Za-z0-9_-]+$/ })),
  hash: text({ max: 255 }),
  // Conditional on the platform ("if not specified … displayed on the Checkout page"): shop modules
  // send none, null, {} or only an e-mail; the page asks for what the payment needs.
  customer: z.optional(
    z.object({
      name: z.optional(text({ min: 2, max: 32, pattern: CUSTOMER_NAME })),
      email: z.optional(text({ max: 255 }).check(z.refine(isEmail, RULE.invalid))),
    }),
  ),
  billing_address: z.optional(
    z.object({
      country: z.optional(z.string().check(z.length(2, RULE.exactly(2)), z.refine(isCountryCode, RULE.invalid))),
      state: z.optional(text({ min: 2, max: 32, pattern: LETTERS })),
      city: z.optional(text({ min: 2, max: 32, pattern: LETTERS })),
      address: z.optional(text({ min: 2, max: 32, pattern: ADDRESS })),
      zip: z.optional(text({ min: 2, max: 10, pattern: ZIP })),
      phone: z.optional(z.string().check(z.maxLength(32, RULE.tooLong(32)), z.regex(PHONE, RULE.invalid))),
    }),
  ),
  parameters: z.optional(z.record(z.string().check(z.regex(CUSTOM_DATA_KEY, RULE.invalid)), stringMap(20, 255))),
  session_expiry: z.optional(z.int().check(z.gte(1, RULE.between(1, 720)), z.lte(720, RULE.between(1, 720)))),
  custom_data: z.optional(stringMap(20, 255)),
});

export const createSessionSchema = sessionSchema(WALLETS_ON_PAGE);
const schemaWithWallets = sessionSchema(true);
const schemaWithoutWallets = sessionSchema(false);

export type CreateSessionRequest = z.infer<typeof createSessionSchema>;

/** Fields the request's hash covers, in order (protocol.md §1). */
export function createSessionHashFields(r: CreateSessionRequest): string[][] {
  const { number, amount, currency, description } = r.order;
  const literals = [String(amount)];
  // A JSON number has lost its trailing zeros: the client most likely signed it in the currency's format.
  const canonical = parseAmount(amount, currency);
  if (typeof amount === 'number' && typeof canonical !== 'string' && canonical.literal !== literals[0]) literals.unshift(canonical.literal);
  return literals.map((literal) => [number, literal, currency, description]);
}

/**
 * The loose forms existing clients send (protocol.md §3), read as their strict equivalents before
 * validation: "true" and "Y" booleans, a single card token as a string, null objects, "" URLs.
 */
export function normalizeLooseForms(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const b: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  const truthy = (v: unknown) => (v === 'true' || v === 'Y' || v === 'y' || v === '1' || v === 1 ? true : v === 'false' || v === 'N' || v === 'n' || v === '0' || v === 0 ? false : v);
  for (const key of ['recurring_init', 'req_token']) if (key in b) b[key] = truthy(b[key]);
  if (typeof b.card_token === 'string') b.card_token = b.card_token === '' ? undefined : [b.card_token];
  for (const key of ['billing_address', 'card_token', 'methods', 'parameters', 'custom_data', 'schedule_id', 'url_target', 'session_expiry', 'language']) {
    if (b[key] === null) delete b[key];
  }
  if (b.language === '') delete b.language;
  if (b.customer === null) delete b.customer;
  // Shop modules send the fields they do not have as "": that is "not given", not "invalid".
  if (b.customer !== null && typeof b.customer === 'object' && !Array.isArray(b.customer)) {
    const customer: Record<string, unknown> = { ...(b.customer as Record<string, unknown>) };
    for (const key of ['name', 'email']) if (customer[key] === '' || customer[key] === null) delete customer[key];
    b.customer = customer;
  }
  for (const key of ['cancel_url', 'expiry_url', 'error_url']) if (b[key] === '' || b[key] === null) delete b[key];
  if (typeof b.session_expiry === 'string' && /^\d{1,4}$/.test(b.session_expiry)) b.session_expiry = Number(b.session_expiry);
  return b;
}

const AMOUNT_MESSAGES = { blank: RULE.blank, 'not-positive': RULE.positive, format: RULE.invalid } as const;

function amountErrors(amount: string | number, currency: string): FieldError[] {
  const parsed = parseAmount(amount, currency);
  return typeof parsed === 'string' ? [{ path: 'order.amount', message: AMOUNT_MESSAGES[parsed] }] : [];
}

/**
 * The amount when the currency is not valid, as the platform answers it (its own invalid example:
 * "1.2" with currency "Dollar" is "should be greater than 0"). An amount written as some currency
 * writes amounts ("10.00", "1500", "10.250", a positive JSON number) gets no item of its own — the
 * currency's item says what is wrong; a number no currency writes that way ("1.2", "0", "-5")
 * cannot be converted into any currency's units and counts as zero; blank stays blank; what is not
 * a number at all is not valid.
 */
function amountErrorsWithoutCurrency(amount: unknown): FieldError[] {
  const item = (message: string): FieldError[] => [{ path: 'order.amount', message }];
  if (amount === undefined || amount === null || (typeof amount === 'string' && amount.trim() === '')) return item(RULE.blank);
  if (typeof amount === 'number') return Number.isFinite(amount) && amount > 0 ? [] : item(Number.isFinite(amount) ? RULE.positive : RULE.invalid);
  if (typeof amount !== 'string' || !/^-?\d+(\.\d+)?$/.test(amount)) return item(RULE.invalid);
  const writtenAsSomeCurrency = Number(amount) > 0 && CURRENCY_EXPONENT_SET.some((e) => new RegExp(e === 0 ? '^\\d{1,15}$' : `^\\d{1,15}\\.\\d{${e}}$`).test(amount));
  return writtenAsSomeCurrency ? [] : item(RULE.positive);
}

/** Where each field's item goes in the answer: the schema's key order, with order.* in its own. */
const FIELD_RANK = (() => {
  const top = Object.keys(createSessionSchema.shape);
  const order = Object.keys(orderSchema.shape);
  return (path: string): number => {
    const [head = '', sub] = path.split('.');
    const i = top.indexOf(head);
    const base = (i < 0 ? top.length : i) * 100;
    return head === 'order' && sub !== undefined ? base + 1 + Math.max(0, order.indexOf(sub)) : base;
  };
})();

/** One item per field in the platform's order; an invalid element of `methods` is reported on `methods`. */
function inPlatformOrder(errors: readonly FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors
    .map((e) => (/^methods\.\d+$/.test(e.path) ? { ...e, path: 'methods' } : e))
    .filter((e) => !seen.has(e.path) && seen.add(e.path))
    .map((e, i) => ({ e, i }))
    .sort((a, b) => FIELD_RANK(a.e.path) - FIELD_RANK(b.e.path) || a.i - b.i)
    .map(({ e }) => e);
}

/**
 * Rules that need more than one field. Returned as field errors so the envelope still has one
 * item per invalid field.
 */
export function crossFieldErrors(r: CreateSessionRequest): FieldError[] {
  const errors: FieldError[] = amountErrors(r.order.amount, r.order.currency);
  if (r.schedule_id !== undefined && r.recurring_init !== true) {
    errors.push({ path: 'schedule_id', message: 'This value is allowed only when recurring_init is true.' });
  }
  // Wallet payments are virtual: no card is kept for recurring charges or the page's saved cards.
  if (r.methods?.some(isWallet) && (r.recurring_init === true || r.req_token === true)) {
    errors.push({ path: 'methods', message: WALLET_RULES.storesNoCard });
  }
  const country = r.billing_address?.country;
  const state = r.billing_address?.state;
  if (country && state && TWO_LETTER_STATE_COUNTRIES.has(country) && !/^[A-Z]{2}$/.test(state)) {
    errors.push({ path: 'billing_address.state', message: RULE.invalid });
  }
  return errors;
}

/** Schema first, then the rules across fields; the hash is checked only on a valid body. */
export function validateCreateSession(body: unknown, options: { readonly walletsOnPage?: boolean } = {}): CreateSessionRequest {
  const normalized = normalizeLooseForms(body);
  const parsed = ((options.walletsOnPage ?? WALLETS_ON_PAGE) ? schemaWithWallets : schemaWithoutWallets).safeParse(normalized);
  if (!parsed.success) {
    // The amount rule depends on the currency, so it is checked even when other fields failed.
    const order = (normalized as { order?: { amount?: unknown; currency?: unknown } } | null)?.order;
    const amount = order?.amount;
    const currency = order?.currency;
    const known = typeof currency === 'string' && isKnownCurrency(currency);
    const extra = known && (typeof amount === 'string' || typeof amount === 'number')
      ? amountErrors(amount, currency)
      : order !== null && typeof order === 'object' && !Array.isArray(order) && !known
        ? amountErrorsWithoutCurrency(amount)
        : [];
    throw invalidRequest(inPlatformOrder(mergeFieldErrors(fieldErrorsFrom(parsed.error.issues), extra)));
  }
  const more = crossFieldErrors(parsed.data);
  if (more.length) throw invalidRequest(inPlatformOrder(more));
  return parsed.data;
}

/** The session a valid request asks for, in the domain's terms. */
export function sessionCommandOf(r: CreateSessionRequest): OpenSession {
  const amount = parseAmount(r.order.amount, r.order.currency);
  if (typeof amount === 'string') throw new Error('amount must be validated before createSession');
  return {
    order: { number: r.order.number, amount, description: r.order.description },
    operation: r.operation,
    methods: r.methods,
    successUrl: r.success_url,
    cancelUrl: r.cancel_url,
    expiryUrl: r.expiry_url,
    errorUrl: r.error_url,
    urlTarget: r.url_target,
    language: r.language?.toLowerCase(),
    reqToken: r.req_token === true,
    cardTokens: r.card_token?.length ? r.card_token : undefined,
    recurringInit: r.recurring_init === true,
    scheduleId: r.schedule_id,
    customer: { ...(r.customer?.name ? { name: r.customer.name } : {}), ...(r.customer?.email ? { email: r.customer.email } : {}) },
    billingAddress: r.billing_address,
    parameters: r.parameters,
    customData: r.custom_data,
    lifetimeMinutes: r.session_expiry,
  };
}

/** The answer: where to send the customer. */
export interface SessionAnswer {
  redirect_url: string;
}
