/**
 * What a customer can do about a decline, from the acquirer's reason (free text, English, as the
 * merchant's callback and status carry it): the page says it in the customer's language instead of
 * quoting the acquirer. Anything not recognised is the generic decline: check the details, use
 * another card, or ask the bank.
 */
export type DeclineKind = 'authentication' | 'funds' | 'expired' | 'generic';

const RULES: readonly (readonly [DeclineKind, RegExp])[] = [
  ['authentication', /3-?d\s*secure|authenticat|not confirmed at the bank|challenge/i],
  ['funds', /insufficient|not enough|funds|limit exceeded|exceeds? (the )?limit/i],
  ['expired', /expired|expiry/i],
];

export function declineKind(reason: string): DeclineKind {
  return RULES.find(([, re]) => re.test(reason))?.[0] ?? 'generic';
}
