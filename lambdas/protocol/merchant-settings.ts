import { AVAILABLE_METHODS, type PreRoutingRule } from '../domain/checkout-methods';
import type { FieldError } from '../domain/errors';
import type { DestinationPolicy } from '../domain/notification-url';
import type { Merchant, MerchantSettings } from '../ports/merchants';
import { settingsProblems } from '../use-cases/manage-merchants';

/**
 * Merchant settings as the outside writes and reads them: the portal's form (snake_case JSON, null
 * clears an optional setting) and the CLI's options (a value "off" clears one). Both read through
 * one table into the same patch, which the settings rule (manage-merchants.ts settingsProblems)
 * then checks, as the use case does again before saving.
 */

type Patch = { -readonly [K in keyof MerchantSettings]?: MerchantSettings[K] };

/** A setting with one value on both sides (branding and pre-routing rules have shapes of their own, below). */
interface Field {
  readonly key: keyof MerchantSettings;
  /** The portal's name for it. */
  readonly json: string;
  /** The CLI option (without "--"). */
  readonly option: string;
  /** Whether null (portal) or "off" (CLI) clears it. */
  readonly clearable: boolean;
  readonly isJson: (v: unknown) => boolean;
  /** The value of a CLI option, or a sentence saying what it must be. */
  readonly fromOption: (value: string) => unknown;
}

class OptionProblem extends Error {}

const onOff = (option: string) => (value: string): boolean => {
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new OptionProblem(`--${option} must be on or off, not "${value}"`);
};
const wholeNumber = (option: string) => (value: string): number => {
  if (!/^\d{1,6}$/.test(value)) throw new OptionProblem(`--${option} must be a whole number, not "${value}"`);
  return Number(value);
};
const asIs = (value: string): string => value;
const list = (value: string): string[] => value.split(',').map((s) => s.trim());

const isString = (v: unknown) => typeof v === 'string';
const isBoolean = (v: unknown) => typeof v === 'boolean';
const isNumber = (v: unknown) => typeof v === 'number';
const isStrings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** In the order the portal reports its field errors. */
const FIELDS: readonly Field[] = [
  { key: 'name', json: 'name', option: 'name', clearable: false, isJson: isString, fromOption: asIs },
  { key: 'dms', json: 'dms', option: 'dms', clearable: false, isJson: isBoolean, fromOption: onOff('dms') },
  { key: 'returnParams', json: 'return_params', option: 'return-params', clearable: false, isJson: isBoolean, fromOption: onOff('return-params') },
  { key: 'autoCaptureDelayMinutes', json: 'auto_capture_delay_minutes', option: 'auto-capture-delay', clearable: true, isJson: isNumber, fromOption: wholeNumber('auto-capture-delay') },
  { key: 'notificationUrl', json: 'notification_url', option: 'notification-url', clearable: true, isJson: isString, fromOption: asIs },
  { key: 'methods', json: 'methods', option: 'methods', clearable: true, isJson: isStrings, fromOption: list },
  { key: 'maxDeclines', json: 'max_declines', option: 'max-declines', clearable: false, isJson: isNumber, fromOption: wholeNumber('max-declines') },
  { key: 'frameAncestors', json: 'frame_ancestors', option: 'frame-ancestors', clearable: true, isJson: isStrings, fromOption: list },
  // Cleared: the stage's own account (the use case checks that a named account exists).
  { key: 'acquirerAccount', json: 'acquirer_account', option: 'acquirer-account', clearable: true, isJson: isString, fromOption: asIs },
  { key: 'emailReceipts', json: 'email_receipts', option: 'email-receipts', clearable: false, isJson: isBoolean, fromOption: onOff('email-receipts') },
  // Apple Pay and Google Pay on the page (docs/wallets.md); cleared: no wallet.
  { key: 'wallets', json: 'wallets', option: 'wallets', clearable: true, isJson: isStrings, fromOption: list },
  { key: 'applePayMerchantId', json: 'apple_pay_merchant_id', option: 'apple-pay-merchant-id', clearable: true, isJson: isString, fromOption: asIs },
  { key: 'googlePayMerchantId', json: 'google_pay_merchant_id', option: 'google-pay-merchant-id', clearable: true, isJson: isString, fromOption: asIs },
  { key: 'googlePayGatewayMerchantId', json: 'google_pay_gateway_merchant_id', option: 'google-pay-gateway-merchant-id', clearable: true, isJson: isString, fromOption: asIs },
];

/** The CLI's setting options, in the order its usage lists them (the brand's two are one setting). */
export const SETTING_OPTIONS = ['name', 'dms', 'auto-capture-delay', 'return-params', 'notification-url', 'methods', 'max-declines', 'brand-color', 'logo-url', 'frame-ancestors', 'acquirer-account', 'email-receipts', 'wallets', 'apple-pay-merchant-id', 'google-pay-merchant-id', 'google-pay-gateway-merchant-id'] as const;
export type SettingOption = (typeof SETTING_OPTIONS)[number];

const INVALID = 'This value is not valid.';

/**
 * Reads the portal's settings form into a settings patch, or the field errors: first each field's
 * type, then the settings rule (its sentences on `settings`).
 */
export function settingsFromForm(body: Record<string, unknown>, destinations?: DestinationPolicy): { settings: Partial<MerchantSettings> } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const out: Patch = {};
  const has = (k: string) => Object.prototype.hasOwnProperty.call(body, k);
  const set = (key: keyof MerchantSettings, value: unknown) => ((out as Record<string, unknown>)[key] = value);
  for (const f of FIELDS) {
    if (!has(f.json)) continue;
    const v = body[f.json];
    if (v === null && f.clearable) set(f.key, undefined);
    else if (f.isJson(v)) set(f.key, v);
    else errors.push({ path: f.json, message: INVALID });
  }
  if (has('branding')) {
    const b = body.branding as { primary_color?: unknown; logo_url?: unknown } | null;
    const optionalString = (v: unknown) => v === undefined || v === null || typeof v === 'string';
    if (b === null) out.branding = undefined;
    else if (typeof b === 'object' && optionalString(b.primary_color) && optionalString(b.logo_url)) {
      out.branding = { primaryColor: (b.primary_color ?? undefined) as string | undefined, logoUrl: (b.logo_url ?? undefined) as string | undefined };
    } else errors.push({ path: 'branding', message: INVALID });
  }
  if (has('pre_routing')) {
    const rules = body.pre_routing;
    if (rules !== null && !(Array.isArray(rules) && rules.length <= 20 && rules.every(isPreRoutingRule))) errors.push({ path: 'pre_routing', message: INVALID });
    else out.preRouting = rules === null ? undefined : (rules as Record<string, unknown>[]).map(preRoutingRuleOf);
  }
  if (errors.length) return { errors };
  const problems = settingsProblems(out, destinations);
  if (problems.length) return { errors: problems.map((message) => ({ path: 'settings', message })) };
  return { settings: out };
}

function isPreRoutingRule(r: unknown): boolean {
  const x = r as Record<string, unknown>;
  return (
    Boolean(x) && typeof x === 'object' && isStrings(x.methods) && (x.methods as string[]).length > 0 &&
    // A rule naming no method the page knows would offer the customer nothing to pay with.
    (x.methods as string[]).every((m) => (AVAILABLE_METHODS as readonly string[]).includes(m)) &&
    new Set(x.methods as string[]).size === (x.methods as string[]).length &&
    !(Number.isSafeInteger(x.min_amount_minor) && Number.isSafeInteger(x.max_amount_minor) && (x.min_amount_minor as number) > (x.max_amount_minor as number)) &&
    (x.currency === undefined || (typeof x.currency === 'string' && /^[A-Z]{3}$/.test(x.currency))) &&
    (x.min_amount_minor === undefined || Number.isSafeInteger(x.min_amount_minor)) &&
    (x.max_amount_minor === undefined || Number.isSafeInteger(x.max_amount_minor))
  );
}

const preRoutingRuleOf = (r: Record<string, unknown>): PreRoutingRule => ({
  methods: r.methods as string[],
  ...(r.currency !== undefined ? { currency: r.currency as string } : {}),
  ...(r.min_amount_minor !== undefined ? { minAmountMinor: r.min_amount_minor as number } : {}),
  ...(r.max_amount_minor !== undefined ? { maxAmountMinor: r.max_amount_minor as number } : {}),
});

/**
 * Reads the CLI's setting options into a settings patch, or the first problem: an option's own
 * form, then the settings rule (callbacks to the local machine allowed here: where callbacks may
 * go depends on the target, which the use case checks).
 */
export function settingsFromOptions(values: Readonly<Partial<Record<SettingOption, string>>>): { settings: Partial<MerchantSettings> } | { problem: string } {
  const patch: Patch = {};
  const branding: { primaryColor?: string; logoUrl?: string } = {};
  let brandingGiven = false;
  const orOff = <T>(value: string, read: (v: string) => T, clearable = true): T | undefined => (clearable && value === 'off' ? undefined : read(value));
  try {
    for (const option of SETTING_OPTIONS) {
      const value = values[option];
      if (value === undefined) continue;
      if (option === 'brand-color' || option === 'logo-url') {
        branding[option === 'brand-color' ? 'primaryColor' : 'logoUrl'] = orOff(value, asIs);
        brandingGiven = true;
        continue;
      }
      const field = FIELDS.find((f) => f.option === option)!;
      (patch as Record<string, unknown>)[field.key] = orOff(value, field.fromOption, field.clearable);
    }
  } catch (e) {
    if (e instanceof OptionProblem) return { problem: e.message };
    throw e;
  }
  if (brandingGiven) patch.branding = branding;
  const problems = settingsProblems(patch, { allowLoopback: true, httpsOnly: false });
  return problems.length ? { problem: problems.join('; ') } : { settings: patch };
}

/**
 * The settings of a merchant by name, those set: what the portal shows and the audit log records.
 * Typed so that a new setting fails to compile here until it is listed.
 */
const SETTINGS_KEYS = Object.keys({
  name: 1, dms: 1, autoCaptureDelayMinutes: 1, returnParams: 1, notificationUrl: 1, methods: 1, maxDeclines: 1, branding: 1, frameAncestors: 1, preRouting: 1, acquirerAccount: 1, emailReceipts: 1,
  wallets: 1, applePayMerchantId: 1, googlePayMerchantId: 1, googlePayGatewayMerchantId: 1,
} satisfies Record<keyof MerchantSettings, 1>) as (keyof MerchantSettings)[];

export const settingsOf = (m: Merchant): Record<string, unknown> => Object.fromEntries(SETTINGS_KEYS.filter((k) => m[k] !== undefined).map((k) => [k, m[k]]));

/** What the CLI's `show` and `set` print: the key, the settings and their times, nothing else stored. */
export function merchantView(m: Merchant): Record<string, unknown> {
  const times = { createdAt: m.createdAt, updatedAt: m.updatedAt, webhookSecretRotatedAt: m.webhookSecretRotatedAt };
  return { merchantKey: m.merchantKey, ...settingsOf(m), ...Object.fromEntries(Object.entries(times).filter(([, v]) => v !== undefined)) };
}
