import * as z from 'zod/mini';
import type { DestinationPolicy } from './domain/notification-url';
import { AWS_CALL_TIMEOUT_MS } from './adapters/aws/request-timeouts';
import { APPLE_PAY_VALIDATION_DEADLINE_MS } from './domain/apple-pay';

/** The runtime configuration, read once at cold start; a bad value fails fast with a clear message. */
/** The highest request limit a merchant can be given (ADR 0025): one merchant's partitions never see more. */
export const MERCHANT_REQUESTS_PER_SECOND_MAX = 1000;

const configSchema = z.object({
  TABLE_NAME: z.string().check(z.minLength(1)),
  MERCHANT_SECRET_PREFIX: z.string().check(z.regex(/^[A-Za-z0-9/_+=.@-]+\/$/)),
  STAGE: z._default(z.string(), 'dev'),
  /** Base of redirect_url and 3-D Secure returns; when unset, the domain API Gateway received the request on (never a header). */
  PUBLIC_BASE_URL: z.optional(z.url()),
  /**
   * Who runs the payment page, named in the checkout page's footer with links to its terms and
   * privacy notice: the stage's `provider` (lib/stages/<stage>.ts), the local runner's own pages
   * by default (local/main.ts). Without a name the footer names no one and links nowhere.
   */
  PROVIDER_NAME: z.optional(z.string().check(z.minLength(1), z.maxLength(80))),
  PROVIDER_TERMS_URL: z.optional(z.url({ protocol: /^https?$/ })),
  PROVIDER_PRIVACY_URL: z.optional(z.url({ protocol: /^https?$/ })),
  /**
   * Where the client's address comes from: API Gateway's source address, or behind CloudFront (the
   * stack sets it with its edge stack) the CloudFront-Viewer-Address header CloudFront writes.
   */
  CLIENT_ADDRESS_FROM: z._default(z.enum(['api-gateway', 'cloudfront']), 'api-gateway'),
  /**
   * A stage behind CloudFront: the Secrets Manager secret whose values CloudFront sends in
   * x-origin-verify (lib/edge-stack.ts). Every HTTP function then refuses a request without one
   * (403, lambdas/middleware/origin-guard.ts). Unset without an edge, and on the local runner.
   */
  ORIGIN_SECRET_ID: z.optional(z.string().check(z.minLength(1))),
  /** The local runner's switch for its own callback receiver on loopback; ignored on AWS. */
  ALLOW_LOOPBACK_CALLBACKS: z._default(z.enum(['0', '1']), '0'),
  /**
   * How long one try of a DynamoDB or Secrets Manager call may wait for its answer before the SDK
   * gives it up and tries again on a new connection (3 tries): a connection that went quiet costs
   * this, not the function's timeout. DynamoDB answers in milliseconds; lib/time-budget.ts counts it.
   */
  AWS_CALL_TIMEOUT_MS: z._default(z.coerce.number().check(z.int(), z.gte(50), z.lte(10_000)), AWS_CALL_TIMEOUT_MS),
  /** Endpoints of the local stand-ins; unset on AWS. */
  DYNAMODB_ENDPOINT: z.optional(z.url()),
  SECRETS_MANAGER_ENDPOINT: z.optional(z.url()),
  /** Name prefix of the acquirer accounts' password secrets (`checkout/<stage>/acquirer-accounts/`); without it no account but the stage's is used. */
  ACQUIRER_ACCOUNT_SECRET_PREFIX: z.optional(z.string().check(z.regex(/^[A-Za-z0-9/_+=.@-]+\/$/))),
  /**
   * Apple Pay (docs/wallets.md): the name prefix of its secrets (`checkout/<stage>/apple-pay/`: one
   * merchant identity certificate and key per Apple Pay merchant identifier, and the stage's
   * domain-association file). Without it the page shows no Apple Pay button.
   */
  APPLE_PAY_SECRET_PREFIX: z.optional(z.string().check(z.regex(/^[A-Za-z0-9/_+=.@-]+\/$/))),
  /** The stage's own Apple Pay merchant identifier, used for merchants that have none of their own. */
  APPLE_PAY_MERCHANT_ID: z.optional(z.string().check(z.regex(/^merchant\.[A-Za-z0-9][A-Za-z0-9.-]{0,120}$/))),
  /**
   * Local runner and tests only: Apple's validation hosts are reached at this host:port (a stand-in),
   * by their names and trusting APPLE_PAY_GATEWAY_CA (PEM). Never set on AWS.
   */
  APPLE_PAY_GATEWAY_ADDRESS: z.optional(z.string().check(z.regex(/^[A-Za-z0-9.-]+:\d{1,5}$/))),
  APPLE_PAY_GATEWAY_CA: z.optional(z.string().check(z.minLength(1))),
  /** Local runner and tests only: a shorter deadline for Apple's validation answer than the stage's (never a longer one). */
  APPLE_PAY_VALIDATION_DEADLINE_MS: z.optional(z.coerce.number().check(z.int(), z.gte(100), z.lte(APPLE_PAY_VALIDATION_DEADLINE_MS))),
  /**
   * The gateway the stage's acquirer is known by to Google Pay (tokenization's `gateway`); the
   * sandbox's default is Google's own test value `example`. Without one no Google Pay button shows.
   */
  GOOGLE_PAY_GATEWAY: z.optional(z.string().check(z.regex(/^[a-z0-9_-]{1,60}$/))),
  /** The acquirer's country (ISO 3166-1 alpha-2): both wallets' payment requests name it. */
  WALLET_COUNTRY: z._default(z.string().check(z.regex(/^[A-Z]{2}$/)), 'US'),
  /** Days an authorization (DMS) may wait for capture before it is released. */
  AUTHORIZATION_VALIDITY_DAYS: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(30)), 7),
  /**
   * How long an operation may wait for the acquirer's answer before the reconciler asks by its key:
   * longer than any acquirer call can take (the routes' timeouts are under 30 s).
   */
  RECONCILE_AFTER_SECONDS: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(3600)), 120),
  /**
   * How long the reconciler waits before it asks again about something still in flight after its
   * first look (an acquirer that did not answer, a refund the gateway has not carried out yet).
   */
  RECONCILE_RETRY_SECONDS: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(3600)), 300),
  /**
   * The admin portal's sign-in on AWS: Cognito's sign-in pages (https://<prefix>.auth.<region>.amazoncognito.com)
   * and the app client the portal uses there. Unset locally, where the portal signs in with the runner.
   */
  OPERATOR_SIGN_IN_URL: z.optional(z.url({ protocol: /^https$/ })),
  OPERATOR_CLIENT_ID: z.optional(z.string().check(z.regex(/^[A-Za-z0-9]{1,128}$/))),
  /** How long a merchant's server may take to answer a callback before it counts as a timeout. */
  CALLBACK_TIMEOUT_MS: z._default(z.coerce.number().check(z.int(), z.gte(100), z.lte(30_000)), 10_000),
  /** The first retry delay of a failed callback (each further one doubles, up to an hour). */
  CALLBACK_FIRST_RETRY_MS: z._default(z.coerce.number().check(z.int(), z.gte(100), z.lte(3_600_000)), 30_000),
  /**
   * 1 where the table's stream dispatcher delivers new callbacks (the stack sets it): a write that
   * makes a callback due leaves the dispatcher its lease, so a delivery takes no lease write. Unset
   * in the local runner, whose relay delivers everything.
   */
  CALLBACK_STREAM: z._default(z.enum(['0', '1']), '0'),
  /**
   * The table's shard counts (lambdas/adapters/dynamodb/keys.ts): unset on AWS (every cloud table's
   * counts), `local` for the local engine's table, which the local runner sets.
   */
  TABLE_SHARDS: z.optional(z.enum(['local'])),
  SECRET_CACHE_TTL_SECONDS: z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(3600)), 300),
  /**
   * Seals the portal's page cursors (HMAC), so a cursor's running count or position cannot be forged.
   * The local runner derives it from its data directory's key. On AWS the key is a generated secret
   * instead (CURSOR_SECRET_ID), given only to the functions that seal cursors; a function with
   * neither refuses to seal or open one.
   */
  CURSOR_SECRET: z.optional(z.string().check(z.minLength(32))),
  /** The Secrets Manager secret holding the cursor key (the stack's CursorKey), read on first use and cached like the other secrets. */
  CURSOR_SECRET_ID: z.optional(z.string().check(z.minLength(1))),
  /**
   * Signed requests one merchant may make per second over the whole merchant API, counted in the
   * table across every function instance (lambdas/middleware/merchant-gate.ts, ADR 0025): under a
   * route's throttle (100 a second), so one merchant cannot take a route's capacity from the others.
   */
  /**
   * Counts and exports one operator may run at once (the portal's bulk reads), counted in the table
   * across every function instance; beyond it 429 OPERATOR_SEARCHES_BUSY with Retry-After.
   */
  OPERATOR_SEARCHES_AT_ONCE: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(10)), 2),
  /**
   * How long one count or export request reads before it answers the part read so far (with a
   * cursor to read on): far under the route's timeout, so a slow index never makes API Gateway's 503.
   */
  ADMIN_SEARCH_BUDGET_MS: z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(25_000)), 10_000),
  // At most what one counter item can take: a DynamoDB partition's 1,000 writes a second (ADR 0025).
  MERCHANT_REQUESTS_PER_SECOND: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(MERCHANT_REQUESTS_PER_SECOND_MAX)), 40),
  /**
   * Who moves the money: the simulated acquirer (`sandbox`, dev and staging) or the S2S CARD
   * gateway (`s2s-card`). prod refuses the sandbox (below, and the stack refuses it first).
   */
  ACQUIRER: z._default(z.enum(['sandbox', 's2s-card']), 'sandbox'),
  /** The S2S CARD gateway's URL that requests are POSTed to (`https://<PAYMENT_URL>/post`). */
  S2S_CARD_URL: z.optional(z.url({ protocol: /^https?$/ })),
  /** The gateway credentials: a Secrets Manager secret {"clientKey","password"} on AWS ... */
  S2S_CARD_SECRET_ID: z.optional(z.string().check(z.minLength(1))),
  /** ... or the values themselves (the local runner). */
  S2S_CARD_CLIENT_KEY: z.optional(z.string().check(z.minLength(1))),
  S2S_CARD_PASSWORD: z.optional(z.string().check(z.minLength(1))),
  /**
   * How long one gateway request may take before its outcome counts as unknown (the reconciler then
   * asks); under the routes' 29 s with room for the writes around it.
   */
  S2S_CARD_TIMEOUT_MS: z._default(z.coerce.number().check(z.int(), z.gte(500), z.lte(20_000)), 15_000),
  /** How long a refund answered ACCEPTED waits in the request for its callback before it is left to reconciliation. */
  S2S_CARD_FOLLOW_UP_WAIT_MS: z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(10_000)), 5_000),
  /**
   * A merchant's chargeback rate of a month (chargebacks over payments settled) at or over this, in
   * percent, alarms and is flagged in the portal: the card schemes' monitoring starts at about 0.9 %.
   */
  CHARGEBACK_RATE_ALARM_PERCENT: z._default(z.coerce.number().check(z.gt(0), z.lte(100)), 0.9),
  /** ... once the month has at least this many settled payments (a merchant's first sales say nothing yet). */
  CHARGEBACK_RATE_MIN_SETTLED: z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(1_000_000)), 100),
  /** Where the audit chain's heads are exported: the Object Lock bucket on AWS (lib/constructs/audit-anchor.ts) ... */
  AUDIT_ANCHOR_BUCKET: z.optional(z.string().check(z.regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/))),
  /** ... or a folder of the data directory (the local runner). */
  AUDIT_ANCHOR_DIR: z.optional(z.string().check(z.minLength(1))),
  /**
   * E-mail receipts (ADR 0037): the stage's verified sender (lib/stages/<stage>.ts `receipts`), set
   * on the functions that queue or send receipts when the stage sends them; without it (and without
   * RECEIPT_MAIL_DIR) no receipt is queued, whatever a merchant's setting says.
   */
  RECEIPT_SENDER: z.optional(z.email()),
  /** The SES configuration set receipts are sent in (its event destination reports bounces and complaints); the receipt job's only. */
  RECEIPT_CONFIGURATION_SET: z.optional(z.string().check(z.regex(/^[A-Za-z0-9_-]{1,64}$/))),
  /** The local runner's stand-in for SES: receipts are written to this folder (DATA_DIR/mail). */
  RECEIPT_MAIL_DIR: z.optional(z.string().check(z.minLength(1))),
  /** The operators' Cognito user pool, whose sign-ins the ImportSignIns job copies into the audit log (ADR 0019). */
  OPERATOR_POOL_ID: z.optional(z.string().check(z.regex(/^[\w-]+_[0-9a-zA-Z]+$/))),
});

export type Config = z.infer<typeof configSchema>;

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const config = parsed.data;
  const problems = acquirerProblems(config);
  if (problems.length) throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  return config;
}

/** Whether this stage sends e-mail receipts at all: a sender (SES) or the local runner's mail folder. */
export const receiptsEnabled = (config: Pick<Config, 'RECEIPT_SENDER' | 'RECEIPT_MAIL_DIR'>): boolean => Boolean(config.RECEIPT_SENDER || config.RECEIPT_MAIL_DIR);

/** What the chosen acquirer needs and the stage allows. */
function acquirerProblems(config: Config): string[] {
  const problems: string[] = [];
  if (config.STAGE === 'prod' && config.ACQUIRER === 'sandbox') problems.push('ACQUIRER: prod never runs on the sandbox acquirer');
  if (config.STAGE === 'prod' && (config.APPLE_PAY_GATEWAY_ADDRESS || config.APPLE_PAY_GATEWAY_CA)) problems.push('APPLE_PAY_GATEWAY_ADDRESS: prod reaches Apple itself');
  if (config.ACQUIRER === 's2s-card') {
    if (!config.S2S_CARD_URL) problems.push('S2S_CARD_URL: required with ACQUIRER=s2s-card');
    const fromEnv = config.S2S_CARD_CLIENT_KEY !== undefined && config.S2S_CARD_PASSWORD !== undefined;
    if (!fromEnv && !config.S2S_CARD_SECRET_ID) problems.push('S2S_CARD_SECRET_ID (or S2S_CARD_CLIENT_KEY and S2S_CARD_PASSWORD): required with ACQUIRER=s2s-card');
  }
  return problems;
}

/**
 * Where callbacks may go (domain/notification-url.ts): on AWS (no local endpoints) https only and
 * never loopback; locally http too, and loopback when ALLOW_LOOPBACK_CALLBACKS=1.
 */
export function destinationPolicy(config: Pick<Config, 'DYNAMODB_ENDPOINT' | 'ALLOW_LOOPBACK_CALLBACKS'>): DestinationPolicy {
  const local = config.DYNAMODB_ENDPOINT !== undefined;
  return { allowLoopback: local && config.ALLOW_LOOPBACK_CALLBACKS === '1', httpsOnly: !local };
}

/** Google Pay's environment of a stage: PRODUCTION on prod only (real cards), TEST elsewhere. */
export const googlePayEnvironment = (config: Pick<Config, 'STAGE'>): 'TEST' | 'PRODUCTION' => (config.STAGE === 'prod' ? 'PRODUCTION' : 'TEST');

/** The Google Pay gateway of the stage: its setting, else `example` (Google's test gateway) on the sandbox. */
export const googlePayGateway = (config: Pick<Config, 'GOOGLE_PAY_GATEWAY' | 'ACQUIRER'>): string | undefined =>
  config.GOOGLE_PAY_GATEWAY ?? (config.ACQUIRER === 'sandbox' ? 'example' : undefined);
