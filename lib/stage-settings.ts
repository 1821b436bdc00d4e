import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { acquirerFromContext, ACQUIRER_CONTEXT, S2S_CARD_URL_CONTEXT, type AcquirerChoice, type AcquirerName } from './acquirer';
import type { Stage } from './naming';
import type { AcquirerTimeouts } from './time-budget';
import { ORIGIN_SECRET_SLOTS, type OriginSecretSlot } from '../lambdas/domain/origin-secret';

/** A custom domain: the name links use, and its ACM certificate in the stack's region (API Gateway's). */
export interface DomainSettings {
  readonly name: string;
  readonly certificateArn: string;
  /**
   * CloudFront and AWS WAF in front of the API (lib/constructs/edge.ts): `name` is then served by a
   * CloudFront distribution with this certificate, which CloudFront requires in us-east-1, and the
   * API's own custom domain becomes `originName` (covered by `certificateArn`), which only the
   * distribution should call. Without it the API serves `name` itself, with no WAF.
   */
  readonly edge?: {
    readonly certificateArn: string;
    readonly originName: string;
    /**
     * Which slot of the origin secret CloudFront sends in x-origin-verify (lib/edge-stack.ts;
     * default `a`). A rotation writes the other slot, then switches this (docs/operations.md,
     * "Rotating secrets"); the functions accept both slots.
     */
    readonly originSecretSlot?: OriginSecretSlot;
  };
}

/** The footer's provider of the checkout page (StageFile.provider). */
export interface ProviderSettings {
  readonly name: string;
  readonly termsUrl: string;
  readonly privacyUrl: string;
}

/** The checkout page functions' environment for the stage's provider (lambdas/config.ts PROVIDER_*); none without one. */
export function providerEnvironment(provider: ProviderSettings | undefined): Record<string, string> {
  return provider ? { PROVIDER_NAME: provider.name, PROVIDER_TERMS_URL: provider.termsUrl, PROVIDER_PRIVACY_URL: provider.privacyUrl } : {};
}

function checkedProvider(provider: ProviderSettings, where: string): ProviderSettings {
  if (!provider.name.trim() || provider.name.length > 80) throw new Error(`${where}: provider.name must be 1 to 80 characters, got ${JSON.stringify(provider.name)}`);
  for (const key of ['termsUrl', 'privacyUrl'] as const) {
    let ok = false;
    try {
      ok = new URL(provider[key]).protocol === 'https:';
    } catch {
      /* not a URL */
    }
    if (!ok) throw new Error(`${where}: provider.${key} must be an https URL, got ${JSON.stringify(provider[key])}`);
  }
  return provider;
}

/**
 * Apple Pay and Google Pay on the stage's page (docs/wallets.md, "Registering the platform"): Apple
 * Pay runs once the platform team has put the merchant identity certificates (and the domain's
 * association file) under `checkout/<stage>/apple-pay/`; `merchantId` is the stage's own Apple Pay
 * merchant identifier, for merchants without one. Google Pay needs the gateway the stage's acquirer
 * is known by to Google (the sandbox's default is Google's test gateway `example`). `country` is
 * the acquirer's (both wallets ask for it). TEST on every stage but prod, PRODUCTION there.
 */
export interface WalletStageSettings {
  /**
   * `domainAssociationFile`: the file Apple gave for the stage's domain (apple-developer-merchantid-
   * domain-association), relative to the project root; served at /.well-known/… by the fallback function.
   */
  readonly applePay?: { readonly merchantId?: string; readonly domainAssociationFile?: string };
  readonly googlePay?: { readonly gateway: string };
  readonly country?: string;
}

/** The checkout page functions' environment for the stage's wallets (lambdas/config.ts APPLE_PAY_*, GOOGLE_PAY_GATEWAY, WALLET_COUNTRY). */
export function walletEnvironment(wallets: WalletStageSettings | undefined, applePaySecretPrefix: string): Record<string, string> {
  if (!wallets) return {};
  if (wallets.applePay?.merchantId !== undefined && !/^merchant\.[A-Za-z0-9][A-Za-z0-9.-]{0,120}$/.test(wallets.applePay.merchantId)) {
    throw new Error(`wallets.applePay.merchantId must be an Apple Pay merchant identifier (merchant.…), got ${JSON.stringify(wallets.applePay.merchantId)}`);
  }
  if (wallets.googlePay && !/^[a-z0-9_-]{1,60}$/.test(wallets.googlePay.gateway)) throw new Error(`wallets.googlePay.gateway must be the gateway's Google Pay id, got ${JSON.stringify(wallets.googlePay.gateway)}`);
  if (wallets.country !== undefined && !/^[A-Z]{2}$/.test(wallets.country)) throw new Error(`wallets.country must be an ISO 3166-1 alpha-2 code, got ${JSON.stringify(wallets.country)}`);
  return {
    ...(wallets.applePay ? { APPLE_PAY_SECRET_PREFIX: applePaySecretPrefix, ...(wallets.applePay.merchantId ? { APPLE_PAY_MERCHANT_ID: wallets.applePay.merchantId } : {}) } : {}),
    ...(wallets.googlePay ? { GOOGLE_PAY_GATEWAY: wallets.googlePay.gateway } : {}),
    ...(wallets.country ? { WALLET_COUNTRY: wallets.country } : {}),
  };
}

/** The stage's Apple Pay domain-association file, compiled into the fallback function's bundle (it is public; too large for the environment). */
export function appleDomainAssociationDefine(wallets: WalletStageSettings | undefined): Record<string, string> {
  const file = wallets?.applePay?.domainAssociationFile;
  if (!file) return {};
  const text = readFileSync(resolve(__dirname, '..', file), 'utf8').trim();
  if (!text || text.length > 64 * 1024) throw new Error(`wallets.applePay.domainAssociationFile ${file} must be Apple's file (1 byte to 64 KB)`);
  return { 'process.env.APPLE_PAY_DOMAIN_ASSOCIATION': JSON.stringify(text) };
}

/**
 * The stage's e-mail receipts (ADR 0037): the address they come from, and what SES verifies for it:
 * the whole domain (DKIM records the platform team publishes; any address of it may send) or the
 * one address (SES mails it a link). docs/operations.md, "E-mail receipts".
 */
export interface ReceiptSettings {
  readonly sender: string;
  readonly verify: 'domain' | 'address';
}

/** `-c receiptSender=receipts@pay.example.com` (and `-c receiptVerify=domain|address`): the file's, overridden. */
export const RECEIPT_SENDER_CONTEXT = 'receiptSender';
export const RECEIPT_VERIFY_CONTEXT = 'receiptVerify';
const SENDER = /^[A-Za-z0-9._%+-]{1,64}@(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

function receiptsFrom(node: Node, file: StageFile, where: string): ReceiptSettings | undefined {
  const given = (key: string) => ((node.tryGetContext(key) as string | undefined) || undefined);
  const sender = given(RECEIPT_SENDER_CONTEXT) ?? file.receipts?.sender;
  if (sender === undefined) return undefined;
  const verify = given(RECEIPT_VERIFY_CONTEXT) ?? file.receipts?.verify ?? 'domain';
  if (!SENDER.test(sender)) throw new Error(`${where}: receipts.sender must be an e-mail address such as receipts@pay.example.com, got ${JSON.stringify(sender)}`);
  if (verify !== 'domain' && verify !== 'address') throw new Error(`${where}: receipts.verify must be domain or address, got ${JSON.stringify(verify)}`);
  return { sender: sender.toLowerCase(), verify };
}

/**
 * One stage as reviewed in lib/stages/<stage>.ts. The command line (`-c …`) may fill in what the file
 * leaves out or override it, but never silently change a fact recorded in `deployed`.
 */
export interface StageFile {
  /** Keep data, operators and logs when the stack is deleted. */
  readonly retain: boolean;
  /** Of every log group: the functions', the API's access log, the VPC's flow log. */
  readonly logRetention: RetentionDays;
  /** The functions' log level: the logger's (LOG_LEVEL) and Lambda's filter of JSON lines, the same. */
  readonly logLevel: 'DEBUG' | 'INFO';
  /**
   * Who moves the money. The S2S CARD gateway's URL may stay out of the file (it differs between
   * the gateway's sandbox and production): then `-c s2sCardUrl=https://…/post` gives it.
   */
  readonly acquirer: { readonly name: 'sandbox' } | { readonly name: 's2s-card'; readonly url?: string };
  /** NAT gateways (and fixed egress addresses) of the S2S CARD egress: one per Availability Zone used. */
  readonly natGateways: number;
  readonly domain?: DomainSettings;
  /** Fixed physical names of a stage deployed before names were generated (docs/operations.md). */
  readonly keepNames?: { readonly tableName?: string; readonly userPoolName?: string };
  /**
   * Reserve each job's concurrency (its workers per tick) so a backlog can neither starve the API
   * nor grow past it. Off where the account's concurrency quota is the new-account default (10).
   */
  readonly reserveJobConcurrency: boolean;
  /** X-Ray sampling beyond the reservoir (lib/constructs/tracing.ts): the share of requests traced. */
  readonly traceFixedRate: number;
  /**
   * Who runs the payment page, named in the checkout page's footer ("Payments by <name>") with links
   * to its terms and privacy notice (https). Without it the footer names no one: write it before
   * customers see the stage, with pages that exist (the links are never checked for you).
   */
  readonly provider?: ProviderSettings;
  /** E-mail receipts from this sender (ADR 0037); without it the stage sends none, whatever a merchant's setting says. */
  readonly receipts?: ReceiptSettings;
  /** Apple Pay and Google Pay (WalletStageSettings); without it no Apple Pay, and Google Pay only on the sandbox's test gateway. */
  readonly wallets?: WalletStageSettings;
  /** Overrides of lib/time-budget.ts ACQUIRER_TIMEOUTS; route timeouts follow. */
  readonly acquirerTimeouts?: AcquirerTimeouts;
  /**
   * What the last deploy of this stage put in place, written here (and reviewed) after it. A synth
   * that would change one of these refuses unless `-c allowSettingsChange=<names>` says so.
   */
  readonly deployed?: {
    readonly domainName?: string;
    readonly acquirer?: AcquirerName;
    readonly tableName?: string;
    readonly userPoolName?: string;
  };
}

/** The stage as built: the file with the command line applied and checked. */
export interface StageSettings extends Omit<StageFile, 'acquirer' | 'domain' | 'keepNames' | 'receipts'> {
  readonly stage: Stage;
  readonly acquirer: AcquirerChoice;
  readonly domain?: DomainSettings;
  readonly keepNames: { readonly tableName?: string; readonly userPoolName?: string };
  readonly receipts?: ReceiptSettings;
}

export const ALLOW_SETTINGS_CHANGE_CONTEXT = 'allowSettingsChange';
/** The deployed facts a synth may change only when told to. */
export const GUARDED_SETTINGS = ['domain', 'acquirer', 'names'] as const;
export type GuardedSetting = (typeof GUARDED_SETTINGS)[number];

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;
const CERTIFICATE_ARN = /^arn:aws[\w-]*:acm:([\w-]+):\d{12}:certificate\/[\w-]+$/;

function checkedDomain(domain: DomainSettings, where: string): DomainSettings {
  if (!HOST_NAME.test(domain.name)) throw new Error(`${where}: domainName must be a host name such as pay.example.com, got ${JSON.stringify(domain.name)} (with -c certificateArn=…)`);
  if (!CERTIFICATE_ARN.test(domain.certificateArn)) {
    throw new Error(`${where}: certificateArn must be the ACM certificate of ${domain.name} in the stack's region (arn:aws:acm:…:certificate/…), got ${JSON.stringify(domain.certificateArn)}`);
  }
  if (domain.edge) {
    if (CERTIFICATE_ARN.exec(domain.edge.certificateArn)?.[1] !== 'us-east-1') {
      throw new Error(`${where}: CloudFront takes its certificate from us-east-1 only: edge.certificateArn must be arn:aws:acm:us-east-1:…, got ${JSON.stringify(domain.edge.certificateArn)}`);
    }
    if (!HOST_NAME.test(domain.edge.originName) || domain.edge.originName.toLowerCase() === domain.name.toLowerCase()) {
      throw new Error(`${where}: edge.originName must be a host name other than ${domain.name} (the name CloudFront calls the API on), got ${JSON.stringify(domain.edge.originName)}`);
    }
    if (domain.edge.originSecretSlot !== undefined && !ORIGIN_SECRET_SLOTS.includes(domain.edge.originSecretSlot)) {
      throw new Error(`${where}: edge.originSecretSlot must be ${ORIGIN_SECRET_SLOTS.join(' or ')}, got ${JSON.stringify(domain.edge.originSecretSlot)}`);
    }
  }
  return { ...domain, name: domain.name.toLowerCase(), ...(domain.edge ? { edge: { ...domain.edge, originName: domain.edge.originName.toLowerCase() } } : {}) };
}

/** `-c domainName=pay.example.com -c certificateArn=arn:aws:acm:…`: both or neither. */
export function domainFromContext(node: Node): DomainSettings | undefined {
  const name = node.tryGetContext('domainName') as unknown;
  const certificateArn = node.tryGetContext('certificateArn') as unknown;
  if ((name === undefined || name === '') && (certificateArn === undefined || certificateArn === '')) return undefined;
  return checkedDomain({ name: String(name ?? ''), certificateArn: String(certificateArn ?? '') }, 'Context');
}

function allowedChanges(node: Node): Set<GuardedSetting> {
  const value = node.tryGetContext(ALLOW_SETTINGS_CHANGE_CONTEXT) as unknown;
  if (value === undefined || value === '') return new Set();
  const names = String(value).split(',').map((n) => n.trim()).filter(Boolean);
  const unknown = names.filter((n) => !GUARDED_SETTINGS.includes(n as GuardedSetting));
  if (unknown.length) throw new Error(`-c ${ALLOW_SETTINGS_CHANGE_CONTEXT} takes ${GUARDED_SETTINGS.join(', ')} (comma separated), got ${unknown.join(', ')}`);
  return new Set(names as GuardedSetting[]);
}

/**
 * The stage's settings: its file, then the command line. The acquirer from `-c acquirer=` (or the
 * file), the gateway URL from the file or `-c s2sCardUrl=`, the domain from `-c domainName= -c
 * certificateArn=` (or the file), kept names from `-c tableName= -c userPoolName=` (or the file).
 * A result that contradicts the file's `deployed` record stops the synth with what would change,
 * unless `-c allowSettingsChange=domain,acquirer,names` names it.
 */
export function resolveStageSettings(node: Node, stage: Stage, file: StageFile): StageSettings {
  const where = `lib/stages/${stage}.ts`;
  const fileAcquirer = file.acquirer;
  const givenAcquirer = node.tryGetContext(ACQUIRER_CONTEXT) as unknown;
  const givenUrl = node.tryGetContext(S2S_CARD_URL_CONTEXT) as unknown;
  const fileUrl = fileAcquirer.name === 's2s-card' ? fileAcquirer.url : undefined;
  if (fileUrl !== undefined && givenUrl !== undefined && givenUrl !== '' && givenUrl !== fileUrl) {
    throw new Error(`-c ${S2S_CARD_URL_CONTEXT}=${String(givenUrl)} contradicts ${where} (acquirer.url ${fileUrl}): change the file, not the command line`);
  }
  const chosen = givenAcquirer === undefined || givenAcquirer === '' ? fileAcquirer.name : givenAcquirer;
  if (chosen === 's2s-card' && fileUrl === undefined && (givenUrl === undefined || givenUrl === '')) {
    throw new Error(`Stage ${stage} runs on the S2S CARD gateway and needs its URL: write acquirer.url in ${where} or pass -c ${S2S_CARD_URL_CONTEXT}=https://<PAYMENT_URL>/post`);
  }
  // acquirerFromContext reads context only: the file's choice stands in for a missing `-c`.
  const acquirer = acquirerFromContext(
    {
      tryGetContext: (key: string) =>
        key === ACQUIRER_CONTEXT ? (givenAcquirer === undefined || givenAcquirer === '' ? fileAcquirer.name : givenAcquirer) : key === S2S_CARD_URL_CONTEXT ? (fileUrl ?? givenUrl) : node.tryGetContext(key),
    } as Node,
    stage,
  );
  const domain = domainFromContext(node) ?? (file.domain ? checkedDomain(file.domain, where) : undefined);
  const contextName = (key: string) => ((node.tryGetContext(key) as string | undefined) || undefined);
  const keepNames = {
    ...(contextName('tableName') ?? file.keepNames?.tableName ? { tableName: contextName('tableName') ?? file.keepNames?.tableName } : {}),
    ...(contextName('userPoolName') ?? file.keepNames?.userPoolName ? { userPoolName: contextName('userPoolName') ?? file.keepNames?.userPoolName } : {}),
  };

  const deployed = file.deployed ?? {};
  const changes: { setting: GuardedSetting; what: string }[] = [];
  if (deployed.domainName !== undefined && domain?.name !== deployed.domainName) {
    changes.push({
      setting: 'domain',
      what: domain
        ? `move the custom domain from ${deployed.domainName} to ${domain.name}`
        : `drop the custom domain ${deployed.domainName}: execute-api on again, and every link, the operators' sign-in return and the gateway's Notification URL changed`,
    });
  }
  if (deployed.acquirer !== undefined && acquirer.name !== deployed.acquirer) {
    changes.push({ setting: 'acquirer', what: `change the acquirer from ${deployed.acquirer} to ${acquirer.name}` });
  }
  for (const key of ['tableName', 'userPoolName'] as const) {
    if (deployed[key] !== undefined && keepNames[key] !== deployed[key]) {
      changes.push({ setting: 'names', what: `${keepNames[key] ? `rename ${deployed[key]} to ${keepNames[key]}` : `stop keeping the name ${deployed[key]}`} (${key}): CloudFormation would replace it, with its data` });
    }
  }
  const allowed = allowedChanges(node);
  const refused = changes.filter((c) => !allowed.has(c.setting));
  if (refused.length) {
    throw new Error(
      `Stage ${stage} is deployed as ${where} records ("deployed"); this synth would ${refused.map((c) => c.what).join('; and ')}. ` +
        `If that is meant, pass -c ${ALLOW_SETTINGS_CHANGE_CONTEXT}=${[...new Set(refused.map((c) => c.setting))].join(',')} and record the new facts in ${where} after the deploy.`,
    );
  }

  if (!Number.isInteger(file.natGateways) || file.natGateways < 1 || file.natGateways > 3) throw new Error(`${where}: natGateways must be 1 to 3, got ${file.natGateways}`);
  if (file.provider) checkedProvider(file.provider, where);
  if (!(file.traceFixedRate >= 0 && file.traceFixedRate <= 1)) throw new Error(`${where}: traceFixedRate must be from 0 to 1, got ${file.traceFixedRate}`);
  const receipts = receiptsFrom(node, file, where);
  const { acquirer: _a, domain: _d, keepNames: _k, receipts: _r, ...rest } = file;
  return { ...rest, stage, acquirer, ...(domain ? { domain } : {}), keepNames, ...(receipts ? { receipts } : {}) };
}
