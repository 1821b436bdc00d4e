import type { PreRoutingRule } from '../domain/checkout-methods';
import type { Wallet } from '../domain/wallet';

/** Merchant settings live in the table; passwords live in the secret store. */
export interface MerchantSettings {
  readonly name: string;
  readonly dms: boolean;
  /** Minutes after authorization before automatic capture; undefined = manual capture only. */
  readonly autoCaptureDelayMinutes?: number;
  readonly returnParams: boolean;
  readonly notificationUrl?: string;
  /** Payment methods this merchant offers when a session names none. */
  readonly methods?: readonly string[];
  /** Declines allowed on one link before the customer is sent to cancel_url. */
  readonly maxDeclines: number;
  readonly branding?: { readonly primaryColor?: string; readonly logoUrl?: string };
  /** Which methods to offer when a session names none (first matching rule wins). */
  readonly preRouting?: readonly PreRoutingRule[];
  /** Origins allowed to frame the checkout page (CSP frame-ancestors). */
  readonly frameAncestors?: readonly string[];
  /** The merchant's own acquirer account (docs/acquirer-accounts.md); the stage's own when absent. */
  readonly acquirerAccount?: string;
  /** E-mail the customer a receipt of each paid checkout that has their e-mail (ADR 0037); off when absent. */
  readonly emailReceipts?: boolean;
  /** The wallets the page may show this merchant's customers (docs/wallets.md); none when absent. */
  readonly wallets?: readonly Wallet[];
  /**
   * The merchant's Apple Pay merchant identifier (`merchant.com.example`), registered with Apple by
   * the platform team; its merchant identity certificate and key are in Secrets Manager, never here.
   */
  readonly applePayMerchantId?: string;
  /** The merchant's id in Google's Pay & Wallet Console (needed by PRODUCTION, not by TEST). */
  readonly googlePayMerchantId?: string;
  /** The id of the merchant's acquirer account at its Google Pay gateway (tokenization's `gatewayMerchantId`). */
  readonly googlePayGatewayMerchantId?: string;
}

export interface Merchant extends MerchantSettings {
  readonly merchantKey: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  /**
   * When the webhook secret was last rotated: read with the merchant before each callback, so a
   * cached secret older than it is read again and a rotated secret signs at once.
   */
  readonly webhookSecretRotatedAt?: string;
}

export const DEFAULT_SETTINGS: MerchantSettings = { name: 'Merchant', dms: false, returnParams: false, maxDeclines: 3 };

export interface MerchantDirectory {
  find(merchantKey: string): Promise<Merchant | undefined>;
  save(merchant: Merchant): Promise<void>;
  /** Creates the merchant; false when the key is taken. */
  create(merchant: Merchant): Promise<boolean>;
  /** Every merchant by name, at most `limit`. */
  list(limit?: number): Promise<Merchant[]>;
  /** Records a webhook secret rotation on the merchant (Merchant.webhookSecretRotatedAt), nothing else. */
  markWebhookSecretRotated(merchantKey: string, at: Date): Promise<void>;
}

/** Whether a merchant may make one more request now, across every instance of every function. */
export interface MerchantRateLimiter {
  /** Counts the request when it is allowed; otherwise says how many seconds until the next window. */
  admit(merchantKey: string, now: Date): Promise<{ readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number }>;
}

/** The merchants' signing passwords. */
export interface MerchantSecrets {
  /** The password, or undefined for an unknown merchant. */
  passwordOf(merchantKey: string): Promise<string | undefined>;
  /**
   * The password read again from the store, bypassing any cache (after a hash mismatch, so a
   * rotated password works at once); implementations may refuse to refresh too often.
   */
  refresh?(merchantKey: string): Promise<string | undefined>;
  /**
   * Replaces the signing password; the webhook secrets are kept. With `previousUntil` the password
   * it replaces is still accepted on requests until then (a rotation's overlap).
   */
  put(merchantKey: string, password: string, previousUntil?: Date): Promise<void>;
  /** The password before the last rotation, while it is still accepted at `now`; else undefined. */
  previousPasswordOf?(merchantKey: string, now: Date): Promise<string | undefined>;
  /**
   * The secrets that sign callbacks (X-Checkout-Signature): the current one first, then the
   * previous one while its rotation grace lasts. Empty when the merchant has none yet.
   * `rotatedAt` is the merchant's Merchant.webhookSecretRotatedAt when the caller has read it: a
   * cache may answer only from what it read under the same rotation.
   */
  webhookSecretsOf(merchantKey: string, now: Date, rotatedAt?: string): Promise<readonly string[]>;
  /** Makes `secret` the current webhook secret; the previous one keeps signing until `previousUntil`. */
  putWebhookSecret(merchantKey: string, secret: string, previousUntil: Date): Promise<void>;
}
