import type { MerchantIdentity, MerchantValidationRequest } from '../domain/apple-pay';

/**
 * Apple Pay's server side (docs/wallets.md): the merchant identities (certificate and key per
 * Apple Pay merchant identifier, in Secrets Manager), and the call to Apple's validation URL with
 * one of them (mutual TLS).
 */
export interface ApplePaySecrets {
  /** The identity of an Apple Pay merchant identifier, or undefined when none is stored. */
  identityOf(merchantIdentifier: string): Promise<MerchantIdentity | undefined>;
}

export interface ApplePayValidation {
  /** Apple's merchant session (opaque JSON for the page), or an error when Apple did not give one. */
  validate(url: URL, identity: MerchantIdentity, request: MerchantValidationRequest): Promise<unknown>;
}

export interface ApplePay {
  readonly secrets: ApplePaySecrets;
  readonly validation: ApplePayValidation;
}
