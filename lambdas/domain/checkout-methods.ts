import type { BillingAddress, Customer } from './payment';

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
  const rule = rules?.find(
    (r) =>
      (r.currency === undefined || r.currency === order.currency) &&
      (r.minAmountMinor === undefined || order.amountMinor >= r.minAmountMinor) &&
      (r.maxAmountMinor === undefined || order.amountMinor <= r.maxAmountMinor),
  );
  if (rule) return rule.methods.filter(isAvailable);
  return [...AVAILABLE_METHODS];
}

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
