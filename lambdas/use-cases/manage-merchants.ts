import { MIN_BUTTON_CONTRAST, contrastWithWhite } from '../domain/branding';
import { walletSettingsProblems } from '../domain/wallet-settings';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../ports/clock';
import { DEFAULT_SETTINGS, type Merchant, type MerchantDirectory, type MerchantSecrets, type MerchantSettings } from '../ports/merchants';
import { MERCHANT_KEY_PATTERN } from '../adapters/secrets-manager/merchant-secrets';
import { WEBHOOK_ROTATION_GRACE_MS, newWebhookSecret } from '../domain/webhook-signature';
import { DEFAULT_DESTINATION_POLICY, notificationUrlProblem, type DestinationPolicy } from '../domain/notification-url';
import { destinationPolicy, type Config } from '../config';
import { isHttpUrl } from '../domain/validation';
import { AVAILABLE_METHODS } from '../domain/checkout-methods';

import { ACCOUNT_ID, STAGE_ACCOUNT } from '../domain/acquirer-account';
import type { AcquirerAccounts } from '../ports/acquirer-accounts';

export interface ManageMerchantsDeps {
  readonly merchants: MerchantDirectory;
  readonly secrets: MerchantSecrets;
  readonly clock: Clock;
  /** The acquirer accounts a merchant may be linked to (a link to one that does not exist is refused). */
  readonly accounts?: AcquirerAccounts;
  /** Decides where callbacks may go (destinationPolicy); without it, the strictest local rules. */
  readonly config?: Pick<Config, 'DYNAMODB_ENDPOINT' | 'ALLOW_LOOPBACK_CALLBACKS'>;
}

const policyOf = (deps: Pick<ManageMerchantsDeps, 'config'>): DestinationPolicy => (deps.config ? destinationPolicy(deps.config) : DEFAULT_DESTINATION_POLICY);

export interface MerchantCredentials {
  readonly merchant_key: string;
  readonly password: string;
  /** Signs callbacks (X-Checkout-Signature); issued with a new merchant. */
  readonly webhook_secret?: string;
}

export class MerchantAdminError extends Error {
  override readonly name = 'MerchantAdminError';
  /** The request field the refusal is about (the admin API's field path), when it is one. */
  constructor(message: string, readonly field?: 'merchant_key') {
    super(message);
  }
}

export const generatePassword = (): string => randomBytes(16).toString('hex');

/** Limits on merchant settings; the page, the capture timer and CSP headers rely on them. */
export const SETTINGS_LIMITS = {
  nameMaxLength: 64,
  /** Seven days: card authorizations are commonly held no longer. */
  autoCaptureDelayMaxMinutes: 7 * 24 * 60,
  maxDeclines: { min: 1, max: 10 },
  urlMaxLength: 1024,
  frameAncestorsMax: 10,
} as const;

const BRAND_COLOR = /^#[0-9A-Fa-f]{6}$/;
/** A CSP frame-ancestors origin: https (a leading wildcard label allowed), or http on the local machine. */
const FRAME_ORIGIN = /^(?:https:\/\/(?:\*\.)?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|http:\/\/(?:localhost|127\.0\.0\.1))(?::\d{1,5})?$/;

const isWholeNumber = (n: unknown, min: number, max: number): boolean => typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max;

/**
 * What is wrong with a settings patch, one sentence per problem; empty when it is acceptable. An
 * undefined value clears an optional setting.
 */
export function settingsProblems(patch: Partial<MerchantSettings>, destinations: DestinationPolicy = DEFAULT_DESTINATION_POLICY): string[] {
  const problems: string[] = [];
  const has = (k: keyof MerchantSettings) => Object.prototype.hasOwnProperty.call(patch, k);
  const { nameMaxLength, autoCaptureDelayMaxMinutes, maxDeclines, urlMaxLength, frameAncestorsMax } = SETTINGS_LIMITS;
  if (has('name') && (typeof patch.name !== 'string' || !patch.name.trim() || patch.name.length > nameMaxLength || /[\p{Cc}]/u.test(patch.name))) {
    problems.push(`name must be 1-${nameMaxLength} characters, without control characters`);
  }
  if (has('dms') && typeof patch.dms !== 'boolean') problems.push('dms must be on or off');
  if (has('returnParams') && typeof patch.returnParams !== 'boolean') problems.push('return params must be on or off');
  if (patch.autoCaptureDelayMinutes !== undefined && !isWholeNumber(patch.autoCaptureDelayMinutes, 0, autoCaptureDelayMaxMinutes)) {
    problems.push(`auto capture delay must be a whole number of minutes from 0 to ${autoCaptureDelayMaxMinutes}`);
  }
  if (patch.notificationUrl !== undefined && !(isHttpUrl(patch.notificationUrl) && patch.notificationUrl.length <= urlMaxLength)) {
    problems.push(`notification URL must be an http(s) URL of at most ${urlMaxLength} characters`);
  } else if (patch.notificationUrl !== undefined) {
    const refused = notificationUrlProblem(patch.notificationUrl, destinations);
    if (refused) problems.push(`notification URL is refused: ${refused}`);
  }
  if (patch.methods !== undefined) {
    const known = AVAILABLE_METHODS as readonly string[];
    const unknown = patch.methods.filter((m) => !known.includes(m));
    if (!patch.methods.length || unknown.length || new Set(patch.methods).size !== patch.methods.length) {
      problems.push(`methods must be a list without repeats of: ${known.join(', ')}${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}`);
    }
  }
  if (has('maxDeclines') && !isWholeNumber(patch.maxDeclines, maxDeclines.min, maxDeclines.max)) {
    problems.push(`max declines must be a whole number from ${maxDeclines.min} to ${maxDeclines.max}`);
  }
  const { primaryColor, logoUrl } = patch.branding ?? {};
  if (primaryColor !== undefined && !BRAND_COLOR.test(primaryColor)) problems.push('brand color must be #RRGGBB');
  // The page's button text is white on this colour: a colour too light to read it on is refused
  // here, where the merchant can choose another, instead of being replaced on the page unseen.
  else if (primaryColor !== undefined && contrastWithWhite(primaryColor) < MIN_BUTTON_CONTRAST) {
    problems.push(`brand color ${primaryColor} is too light: white text on it has a contrast of ${contrastWithWhite(primaryColor).toFixed(2)}:1, and the page needs at least ${MIN_BUTTON_CONTRAST}:1 (try a darker shade)`);
  }
  if (logoUrl !== undefined && !(isHttpUrl(logoUrl) && logoUrl.startsWith('https:') && logoUrl.length <= urlMaxLength)) {
    // The page is served over https; an http logo would be mixed content.
    problems.push(`logo URL must be an https URL of at most ${urlMaxLength} characters`);
  }
  if (patch.acquirerAccount !== undefined && (!ACCOUNT_ID.test(patch.acquirerAccount) || patch.acquirerAccount === STAGE_ACCOUNT)) {
    problems.push(`acquirer account must be an account's id (lower-case letters, digits and dashes), or off for the stage's own`);
  }
  problems.push(...walletSettingsProblems(patch));
  if (patch.frameAncestors !== undefined) {
    const bad = patch.frameAncestors.filter((o) => !FRAME_ORIGIN.test(o));
    if (!patch.frameAncestors.length || patch.frameAncestors.length > frameAncestorsMax || bad.length) {
      problems.push(
        `frame ancestors must be 1-${frameAncestorsMax} origins like https://shop.example or https://*.shop.example${bad.length ? ` (not an origin: ${bad.join(', ')})` : ''}`,
      );
    }
  }
  return problems;
}

function assertValidSettings(patch: Partial<MerchantSettings>, destinations: DestinationPolicy): void {
  const problems = settingsProblems(patch, destinations);
  if (problems.length) throw new MerchantAdminError(problems.join('; '));
}

/** A merchant is linked only to an account that exists (docs/acquirer-accounts.md). */
async function assertAccountExists(deps: Pick<ManageMerchantsDeps, 'accounts'>, patch: Partial<MerchantSettings>): Promise<void> {
  if (patch.acquirerAccount === undefined) return;
  if (!deps.accounts) throw new MerchantAdminError('acquirer accounts cannot be linked here');
  if (!(await deps.accounts.find(patch.acquirerAccount))) throw new MerchantAdminError(`acquirer account ${patch.acquirerAccount} does not exist`);
}

/** Creates a merchant: settings in the table, signing password in the secret store. */
export async function createMerchant(
  deps: ManageMerchantsDeps,
  input: { name: string; merchantKey?: string; password?: string; settings?: Partial<MerchantSettings> },
): Promise<MerchantCredentials> {
  const merchantKey = input.merchantKey ?? randomUUID();
  if (!MERCHANT_KEY_PATTERN.test(merchantKey)) throw new MerchantAdminError('merchant key must be 1-64 letters, digits or hyphens', 'merchant_key');
  const password = input.password ?? generatePassword();
  if (password.length < 16) throw new MerchantAdminError('password must have at least 16 characters');
  assertValidSettings({ ...input.settings, name: input.name }, policyOf(deps));
  await assertAccountExists(deps, input.settings ?? {});
  const now = deps.clock.now().toISOString();
  const merchant: Merchant = { ...DEFAULT_SETTINGS, ...input.settings, name: input.name, merchantKey, createdAt: now, updatedAt: now };
  if (!(await deps.merchants.create(merchant))) throw new MerchantAdminError(`merchant ${merchantKey} already exists`, 'merchant_key');
  await deps.secrets.put(merchantKey, password);
  const webhookSecret = newWebhookSecret();
  await deps.secrets.putWebhookSecret(merchantKey, webhookSecret, deps.clock.now());
  return { merchant_key: merchantKey, password, webhook_secret: webhookSecret };
}

/**
 * A new webhook secret (X-Checkout-Signature). The previous one keeps signing beside it for a day,
 * so the merchant's receiver can switch without rejecting callbacks meanwhile. Merchants created
 * before webhook secrets existed get their first one here.
 */
export async function rotateWebhookSecret(deps: ManageMerchantsDeps, merchantKey: string): Promise<{ merchant_key: string; webhook_secret: string; previous_valid_until?: string }> {
  await showMerchant(deps, merchantKey);
  const had = (await deps.secrets.webhookSecretsOf(merchantKey, deps.clock.now())).length > 0;
  const secret = newWebhookSecret();
  const until = new Date(deps.clock.now().getTime() + WEBHOOK_ROTATION_GRACE_MS);
  await deps.secrets.putWebhookSecret(merchantKey, secret, until);
  // After the secret is stored: a delivery that reads the merchant's new rotation time reads the new
  // secret too, in whichever function's cache the old one sits (deliver-callbacks.ts).
  await deps.merchants.markWebhookSecretRotated(merchantKey, deps.clock.now());
  return { merchant_key: merchantKey, webhook_secret: secret, ...(had ? { previous_valid_until: until.toISOString() } : {}) };
}

/** The merchant's current webhook secret, for `merchant show` (never for a browser). */
export async function webhookSecretOf(deps: ManageMerchantsDeps, merchantKey: string): Promise<string | undefined> {
  return (await deps.secrets.webhookSecretsOf(merchantKey, deps.clock.now()))[0];
}

export async function showMerchant(deps: Omit<ManageMerchantsDeps, 'secrets'>, merchantKey: string): Promise<Merchant> {
  const merchant = await deps.merchants.find(merchantKey);
  if (!merchant) throw new MerchantAdminError(`merchant ${merchantKey} not found`);
  return merchant;
}

export async function updateMerchantSettings(
  deps: Omit<ManageMerchantsDeps, 'secrets'>,
  merchantKey: string,
  patch: Partial<MerchantSettings>,
): Promise<Merchant> {
  assertValidSettings(patch, policyOf(deps));
  await assertAccountExists(deps, patch);
  const current = await showMerchant(deps, merchantKey);
  const next: Merchant = { ...current, ...patch, merchantKey, updatedAt: deps.clock.now().toISOString() };
  // Branding is changed field by field: a new logo keeps the colour.
  if (patch.branding) {
    const branding = { ...current.branding, ...patch.branding };
    for (const k of Object.keys(branding) as (keyof typeof branding)[]) if (branding[k] === undefined) delete branding[k];
    (next as { branding?: Merchant['branding'] }).branding = Object.keys(branding).length ? branding : undefined;
  }
  for (const k of Object.keys(next) as (keyof Merchant)[]) if (next[k] === undefined) delete (next as Partial<Merchant>)[k];
  await deps.merchants.save(next);
  return next;
}

/** How long the signing password a rotation replaces is still accepted, as the webhook secret's: a live integration switches without failing. */
export const PASSWORD_ROTATION_GRACE_MS = WEBHOOK_ROTATION_GRACE_MS;

/**
 * A new signing password, accepted at once; the one it replaces is still accepted on requests for
 * PASSWORD_ROTATION_GRACE_MS (callbacks and return URLs are signed with the new one at once).
 */
export async function rotatePassword(deps: ManageMerchantsDeps, merchantKey: string): Promise<MerchantCredentials & { previous_valid_until: string }> {
  await showMerchant(deps, merchantKey);
  const password = generatePassword();
  const until = new Date(deps.clock.now().getTime() + PASSWORD_ROTATION_GRACE_MS);
  await deps.secrets.put(merchantKey, password, until);
  return { merchant_key: merchantKey, password, previous_valid_until: until.toISOString() };
}
