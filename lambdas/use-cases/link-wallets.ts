import { googlePayTokenizationOf, linkedAccountOf, walletsForPage, walletsOn, type AccountWallets, type GooglePayTokenization, type StageWallets } from '../domain/wallet-settings';
import type { Wallet } from '../domain/wallet';
import type { LinkPayment } from '../domain/payment';
import { logger } from '../observability/logger';
import type { AccountReader } from '../ports/acquirer-accounts';
import type { Merchant } from '../ports/merchants';

/** The wallets a link offers now, with Google Pay's tokenization parameters when Google Pay is one. */
export interface LinkWallets {
  readonly offered: readonly Wallet[];
  readonly googlePay?: GooglePayTokenization;
}

/**
 * The wallets of a link: the buttons its page shows and the only wallets a payment on it may use
 * (one rule for both, walletsForPage). A merchant linked to an acquirer account takes Google Pay's
 * parameters from it: the account is read, through the instance's cache the connector shares, only
 * when Google Pay would otherwise be offered. A failed read costs the Google Pay button, never the
 * page: the card form and Apple Pay stay.
 */
export async function linkWallets(deps: { readonly accountReader: AccountReader }, stage: StageWallets, payment: LinkPayment, merchant: Merchant): Promise<LinkWallets> {
  const linked = linkedAccountOf(merchant);
  let account: AccountWallets | undefined;
  if (linked && walletsOn(payment.checkout, merchant, payment.order).includes('googlepay')) {
    account = await deps.accountReader.find(linked).catch((e: unknown) => {
      logger.warn('reading the merchant\'s acquirer account failed; no Google Pay on this page', { accountId: linked, error: e as Error });
      return undefined;
    });
  }
  const offered = walletsForPage(payment.checkout, merchant, payment.order, stage, account);
  const googlePay = offered.includes('googlepay') ? googlePayTokenizationOf(merchant, account, stage) : undefined;
  return { offered, ...(googlePay ? { googlePay } : {}) };
}
