import { brandOfNetwork, type PanType, type WalletPayment } from '../../domain/wallet';
import type { CardFacts } from './ledger';
import { SANDBOX_TEST_CARDS } from './rules';

/**
 * The sandbox's wallet tokens (docs/sandbox.md, "Wallet tokens"): what a test double of the Apple
 * Pay or Google Pay JS API hands the page instead of an encrypted token. A JSON text naming the
 * wallet, a test card by its network and last four digits, the expiry that chooses the outcome (the
 * test cards' table), and the auth method:
 *
 *   {"sandbox":"googlepay","network":"VISA","last4":"1111","expiry":"05/38","authMethod":"PAN_ONLY"}
 *
 * The sandbox reads it as a gateway decrypts a real token: into the card facts its rules decide on.
 */
export interface SandboxWalletToken {
  readonly facts: CardFacts;
  readonly panType: PanType;
}

export const SANDBOX_WALLET_REASONS = {
  invalidToken: 'The wallet token could not be read.',
} as const;

/** A sandbox wallet token as a test double writes it (tests and docs use this). */
export function sandboxWalletToken(t: { readonly wallet: string; readonly network: string; readonly last4: string; readonly expiry: string; readonly authMethod?: 'PAN_ONLY' | 'CRYPTOGRAM_3DS' }): string {
  return JSON.stringify({ sandbox: t.wallet, network: t.network, last4: t.last4, expiry: t.expiry, authMethod: t.authMethod ?? 'CRYPTOGRAM_3DS' });
}

/** The card facts and PAN type of a sandbox wallet token for `wallet`; undefined when it is not one. */
export function readSandboxWalletToken(payment: Pick<WalletPayment, 'wallet' | 'paymentToken'>): SandboxWalletToken | undefined {
  let v: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(payment.paymentToken);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
    v = parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (v.sandbox !== payment.wallet || typeof v.network !== 'string' || typeof v.last4 !== 'string' || !/^\d{4}$/.test(v.last4)) return undefined;
  const expiry = typeof v.expiry === 'string' ? /^(0[1-9]|1[0-2])\/(\d{2}|\d{4})$/.exec(v.expiry) : null;
  if (!expiry) return undefined;
  const authMethod = v.authMethod ?? 'CRYPTOGRAM_3DS';
  if (authMethod !== 'PAN_ONLY' && authMethod !== 'CRYPTOGRAM_3DS') return undefined;
  const brand = brandOfNetwork(v.network);
  const test = SANDBOX_TEST_CARDS.find((c) => c.brand === brand && c.number.endsWith(v.last4 as string));
  const year = Number(expiry[2]);
  return {
    // A test card's mask, so every rule of its expiry applies; any other card is the wallet's last four.
    facts: { mask: test ? test.mask : `******${v.last4}`, expMonth: Number(expiry[1]), expYear: year < 100 ? 2000 + year : year },
    panType: authMethod === 'PAN_ONLY' ? 'fpan' : 'dpan',
  };
}
