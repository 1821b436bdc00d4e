import { GOOGLE_PAY_GATEWAY_MERCHANT_ID, STAGE_ACCOUNT, type AcquirerAccount } from './acquirer-account';
import { walletsOffered, type PreRoutingRule } from './checkout-methods';
import { WALLETS, isWallet, walletRefusal, type Wallet } from './wallet';

/**
 * A merchant's wallet settings (docs/wallets.md, "Registering a merchant"): which wallets are on, the
 * Apple Pay merchant identifier and the Google Pay ids. The Apple Pay merchant identity certificate
 * and key are in Secrets Manager, never in these settings.
 */
export interface WalletSettings {
  readonly wallets?: readonly Wallet[];
  readonly applePayMerchantId?: string;
  readonly googlePayMerchantId?: string;
  readonly googlePayGatewayMerchantId?: string;
}

/** Apple's merchant identifiers are reverse-DNS names starting `merchant.`. */
export const APPLE_PAY_MERCHANT_ID = /^merchant\.[A-Za-z0-9][A-Za-z0-9.-]{0,120}$/;
/** Google's merchant ids are 12 to 20 characters (BCR2DN…); gateway merchant ids are the gateway's own (GOOGLE_PAY_GATEWAY_MERCHANT_ID). */
const GOOGLE_PAY_MERCHANT_ID = /^[A-Za-z0-9]{1,40}$/;

/** The sentences of what is wrong with the wallet part of a settings patch (manage-merchants.ts settingsProblems). */
export function walletSettingsProblems(patch: WalletSettings): string[] {
  const problems: string[] = [];
  if (patch.wallets !== undefined) {
    const unknown = patch.wallets.filter((w) => !isWallet(w));
    if (!Array.isArray(patch.wallets) || unknown.length || new Set(patch.wallets).size !== patch.wallets.length) {
      problems.push(`wallets must be a list without repeats of: ${WALLETS.join(', ')}${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}`);
    }
  }
  if (patch.applePayMerchantId !== undefined && !APPLE_PAY_MERCHANT_ID.test(patch.applePayMerchantId)) {
    problems.push('Apple Pay merchant id must be the identifier registered with Apple, such as merchant.com.example.shop');
  }
  if (patch.googlePayMerchantId !== undefined && !GOOGLE_PAY_MERCHANT_ID.test(patch.googlePayMerchantId)) {
    problems.push("Google Pay merchant id must be the Google Pay & Wallet Console's merchant id (letters and digits)");
  }
  if (patch.googlePayGatewayMerchantId !== undefined && !GOOGLE_PAY_GATEWAY_MERCHANT_ID.test(patch.googlePayGatewayMerchantId)) {
    problems.push('Google Pay gateway merchant id must be 1-100 letters, digits and . _ : -');
  }
  return problems;
}

/** What a stage knows of the wallets (lambdas/config.ts): which it can run at all. */
export interface StageWallets {
  /** Apple Pay merchant validation has its certificates here (APPLE_PAY_SECRET_PREFIX). */
  readonly applePay: boolean;
  /** The stage's own Apple Pay merchant identifier, for merchants without one (APPLE_PAY_MERCHANT_ID). */
  readonly applePayMerchantId?: string;
  /** The id the stage's own acquirer account is known by to Google Pay (GOOGLE_PAY_GATEWAY); Google Pay is off on the stage's account without it. */
  readonly googlePayGateway?: string;
}

type WalletSession = { readonly methods?: readonly string[]; readonly recurringInit: boolean; readonly reqToken: boolean };
type WalletMerchant = WalletSettings & { readonly dms: boolean; readonly preRouting?: readonly PreRoutingRule[]; readonly acquirerAccount?: string };

/** Google Pay's `PAYMENT_GATEWAY` tokenization parameters: whom the token is encrypted for. */
export interface GooglePayTokenization {
  readonly gateway: string;
  readonly gatewayMerchantId: string;
}

/** What the page reads of a merchant's own acquirer account: its Google Pay parameters. */
export type AccountWallets = Pick<AcquirerAccount, 'googlePayGateway' | 'googlePayGatewayMerchantId'>;

/** Whether a merchant pays through an account of its own (its settings name one), not the stage's. */
export const linkedAccountOf = (merchant: { readonly acquirerAccount?: string }): string | undefined =>
  merchant.acquirerAccount && merchant.acquirerAccount !== STAGE_ACCOUNT ? merchant.acquirerAccount : undefined;

/**
 * The Google Pay tokenization parameters of a merchant's payments. The token is encrypted for the
 * gateway the payment goes through, so the parameters follow the merchant's acquirer account: a
 * merchant linked to one takes that account's gateway and gateway merchant id (`account`, the
 * account its settings name; undefined when it has none or could not be read); a merchant on the
 * stage's own account the stage's gateway and its own gateway merchant id. Nothing is mixed: an
 * account's missing field is not filled in from the stage or the merchant. Undefined when either
 * is missing: no Google Pay.
 */
export function googlePayTokenizationOf(
  merchant: Pick<WalletMerchant, 'acquirerAccount' | 'googlePayGatewayMerchantId'>,
  account: AccountWallets | undefined,
  stage: Pick<StageWallets, 'googlePayGateway'>,
): GooglePayTokenization | undefined {
  const [gateway, gatewayMerchantId] = linkedAccountOf(merchant)
    ? [account?.googlePayGateway, account?.googlePayGatewayMerchantId]
    : [stage.googlePayGateway, merchant.googlePayGatewayMerchantId];
  return gateway && gatewayMerchantId ? { gateway, gatewayMerchantId } : undefined;
}

/**
 * The wallets a link may be paid with: those the session offers (its `methods`, else the
 * merchant's pre-routing, else every wallet) that the merchant has on; none when the session's or
 * the merchant's rules refuse wallets (recurring, saved cards, DMS: `walletRefusal`).
 */
export function walletsOn(session: WalletSession, merchant: WalletMerchant, order: { readonly currency: string; readonly amountMinor: number }): Wallet[] {
  if (walletRefusal(session, merchant)) return [];
  const on = merchant.wallets ?? [];
  return walletsOffered(session.methods, merchant.preRouting, order).filter((w) => on.includes(w));
}

/** The Apple Pay merchant identifier a merchant validates with: its own, else the stage's. */
export const applePayMerchantIdOf = (merchant: WalletSettings, stage: Pick<StageWallets, 'applePayMerchantId'>): string | undefined =>
  merchant.applePayMerchantId ?? stage.applePayMerchantId;

/**
 * The wallets a link's page may show, and the only ones a wallet payment on it may use: walletsOn,
 * less what the stage cannot run or the merchant has no ids for (Google Pay: no complete
 * tokenization parameters, googlePayTokenizationOf with the merchant's `account`). The browser then
 * shows only those its wallet says it can pay with.
 */
export function walletsForPage(
  session: WalletSession,
  merchant: WalletMerchant,
  order: { readonly currency: string; readonly amountMinor: number },
  stage: StageWallets,
  account?: AccountWallets,
): Wallet[] {
  return walletsOn(session, merchant, order).filter((w) =>
    w === 'applepay' ? stage.applePay && Boolean(applePayMerchantIdOf(merchant, stage)) : googlePayTokenizationOf(merchant, account, stage) !== undefined,
  );
}
