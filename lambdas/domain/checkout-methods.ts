import type { BillingAddress, Customer } from './payment';
import { WALLETS, isWallet, type Wallet } from './wallet';

/** Payment methods this service can route to, and what each needs from the customer. */
export const AVAILABLE_METHODS = ['card'] as const;
export type PaymentMethod = (typeof AVAILABLE_METHODS)[number];

export type CustomerField = 'email' | 'country' | 'city' | 'address' | 'zip' | 'phone';

/** The sandbox card needs an e-mail and a billing country; other fields would be listed here. */
export const METHOD_REQUIREMENTS: Readonly<Record<PaymentMethod, readonly CustomerField[]>> = {
  card: ['email', 'country'],
};

/** A merchant's pre-routing rule: when the order matches, offer these methods. */
export interface PreRoutingRule {
  readonly currency?: string;
  readonly minAmountMinor?: number;
  readonly maxAmountMinor?: number;
  readonly methods: readonly string[];
}

const isAvailable = (m: string): m is PaymentMethod => (AVAILABLE_METHODS as readonly string[]).includes(m);

/**
 * The methods offered: the session's `methods`, else the first matching pre-routing rule of the
 * merchant, else every available method.
 */
export function methodsOffered(
  sessionMethods: readonly string[] | undefined,
  rules: readonly PreRoutingRule[] | undefined,
  order: { currency: string; amountMinor: number },
): PaymentMethod[] {
  if (sessionMethods?.length) return sessionMethods.filter(isAvailable);
  const rule = matchingRule(rules, order);
  if (rule) return rule.methods.filter(isAvailable);
  return [...AVAILABLE_METHODS];
}

/**
 * Whether the hosted page shows the wallets' buttons (it does: lambdas/checkout-page/wallets.ts). Off,
 * a session's `methods` could not name `applepay` or `googlepay`; the switch stays for a stage that
 * must take them off the page again (docs/wallets.md).
 */
export const WALLETS_ON_PAGE = true;

/** The values a session's `methods` may hold: the page's methods, and the wallets once the page shows them. */
export const sessionMethodValues = (walletsOnPage: boolean = WALLETS_ON_PAGE): readonly string[] =>
  walletsOnPage ? [...AVAILABLE_METHODS, ...WALLETS] : AVAILABLE_METHODS;

/**
 * The wallets offered, chosen as methodsOffered chooses the methods: the session's `methods`, else
 * the merchant's first matching pre-routing rule, else every wallet once the page shows them.
 */
export function walletsOffered(
  sessionMethods: readonly string[] | undefined,
  rules: readonly PreRoutingRule[] | undefined,
  order: { currency: string; amountMinor: number },
  walletsOnPage: boolean = WALLETS_ON_PAGE,
): Wallet[] {
  if (sessionMethods?.length) return sessionMethods.filter(isWallet);
  const rule = matchingRule(rules, order);
  if (rule) return rule.methods.filter(isWallet);
  return walletsOnPage ? [...WALLETS] : [];
}

const matchingRule = (rules: readonly PreRoutingRule[] | undefined, order: { currency: string; amountMinor: number }) =>
  rules?.find(
    (r) =>
      (r.currency === undefined || r.currency === order.currency) &&
      (r.minAmountMinor === undefined || order.amountMinor >= r.minAmountMinor) &&
      (r.maxAmountMinor === undefined || order.amountMinor <= r.maxAmountMinor),
  );

/** The customer fields the page must ask for: needed by the method and missing from the session. */
export function missingCustomerFields(method: PaymentMethod, customer: Customer, billing: BillingAddress | undefined): CustomerField[] {
  const have: Record<CustomerField, string | undefined> = {
    email: customer.email,
    country: billing?.country,
    city: billing?.city,
    address: billing?.address,
    zip: billing?.zip,
    phone: billing?.phone,
  };
  return METHOD_REQUIREMENTS[method].filter((f) => !have[f]);
}
