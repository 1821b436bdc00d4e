import { Annotations, Aws, CfnCondition, CfnOutput, Fn, NestedStack, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import type { IHttpRouteAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2';
import { ApplicationLogLevel } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct, Node } from 'constructs';
import { AlarmTopic } from './constructs/alarm-topic';
import { CallbackDelivery } from './constructs/callback-delivery';
import { CheckoutApi } from './constructs/checkout-api';
import { CheckoutFunction, type FunctionSettings } from './constructs/checkout-function';
import { CheckoutTable } from './constructs/checkout-table';
import { MerchantSecrets } from './constructs/merchant-secrets';
import { Monitoring, type ChargebackRateRule } from './constructs/monitoring';
import { OperatorPool } from './constructs/operator-pool';
import { ScheduledJobs } from './constructs/scheduled-jobs';
import { AUDIT_ANCHOR_JOB_ID, CALLBACK_DISPATCHER, JOBS, RECEIPT_JOB_ID, SIGN_IN_IMPORT_JOB_ID, type JobDefinition } from './jobs';
import type { TableAccess } from './table-access';
import { ReceiptMail } from './constructs/receipt-mail';
import { AuditAnchor, auditAnchorRetentionDaysFromContext } from './constructs/audit-anchor';
import { MAX_METRIC_MERCHANTS, METRIC_NAMESPACE } from '../lambdas/observability/metric-names';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { AcquirerChoice } from './acquirer';
import { StaticEgress } from './constructs/static-egress';
import { EDGE_REGION, originSecretName } from './edge-stack';
import { Tracing } from './constructs/tracing';
import { appleDomainAssociationDefine, providerEnvironment, resolveStageSettings, walletEnvironment, type DomainSettings, type StageFile, type StageSettings } from './stage-settings';
import { STAGE_FILES } from './stages';
import { ACQUIRER_TIMEOUTS, acquirerTimeoutEnvironment, routeTimeoutSeconds, type AcquirerTimeouts } from './time-budget';
import type { FunctionAcquirer } from './constructs/checkout-function';
import { accountSecretPrefix, applePaySecretPrefix, merchantSecretPrefix, stackName, type Stage } from './naming';
import { deployedRoutes, FALLBACK_ROUTE, FALLBACK_ROUTE_KEY, ROUTES, type RouteDefinition } from './routes';
import { CHECKOUT_PAGE_ROUTES } from './route-table/pages';
import { mapsStackTraces, ORIGIN_SECRET_INJECT } from './bundling';
import { TABLE_INDEXES_CONTEXT, TABLE_SCHEMA, tableIndexesFromContext } from './table-schema';

export interface CheckoutStackProps extends StackProps {
  readonly stage: Stage;
  /** The route table to deploy; only tests pass another one (to cover every kind of access). */
  readonly routes?: readonly RouteDefinition[];
  /** The scheduled jobs to deploy; only tests pass other ones. */
  readonly jobs?: readonly JobDefinition[];
  /**
   * Days an authorization may wait for capture. Default: context `authorizationValidityDays`
   * (cdk.json: one number per stage, or `-c authorizationValidityDays=N` for any stage), else 7.
   */
  readonly authorizationValidityDays?: number;
  /**
   * The public base of the links handed out (redirect_url, 3-D Secure returns), e.g. a custom
   * domain `https://pay.example.com`. Default: context `publicBaseUrl`, else the API's own URL.
   * Never taken from a request's headers.
   */
  readonly publicBaseUrl?: string;
  /**
   * The stage's reviewed settings: lib/stages/<stage>.ts, with the command line applied
   * (lib/stage-settings.ts: acquirer, gateway URL, domain, kept names; refused when they would
   * change what the file records as deployed). Only tests pass another file.
   */
  readonly stageFile?: StageFile;
}

export { domainFromContext } from './stage-settings';

/** Each stage's reviewed settings (lib/stages/): retention, log level and the rest. */
export const STAGE_SETTINGS: Readonly<Record<Stage, StageFile>> = STAGE_FILES;

export const METRIC_MERCHANTS_CONTEXT = 'metricMerchants';
const MERCHANT_KEY = /^[A-Za-z0-9-]{1,64}$/;

/**
 * The merchants given their own approval-rate metric and alarm: context `metricMerchants`, a list
 * (or comma-separated text) for every stage or `{ "prod": [...] }` per stage; at most
 * MAX_METRIC_MERCHANTS, so the metric's merchant dimension stays bounded.
 */
export function metricMerchantsFromContext(node: Node, stage: Stage): string[] {
  const value: unknown = node.tryGetContext(METRIC_MERCHANTS_CONTEXT);
  const chosen = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[stage] : value;
  if (chosen === undefined || chosen === '') return [];
  const keys = typeof chosen === 'string' ? chosen.split(',').map((k) => k.trim()).filter(Boolean) : chosen;
  if (!Array.isArray(keys) || !keys.every((k): k is string => typeof k === 'string' && MERCHANT_KEY.test(k))) {
    throw new Error(`Context ${METRIC_MERCHANTS_CONTEXT} for ${stage} must list merchant keys, got ${JSON.stringify(chosen)}`);
  }
  if (new Set(keys).size > MAX_METRIC_MERCHANTS) {
    throw new Error(`Context ${METRIC_MERCHANTS_CONTEXT} for ${stage} names ${new Set(keys).size} merchants; at most ${MAX_METRIC_MERCHANTS} get their own metric`);
  }
  return [...new Set(keys)];
}

export const AUTHORIZATION_VALIDITY_DAYS_CONTEXT = 'authorizationValidityDays';
export const DEFAULT_AUTHORIZATION_VALIDITY_DAYS = 7;
/** lambdas/config.ts refuses anything else at cold start; the synth refuses it first. */
const AUTHORIZATION_VALIDITY_DAYS_RANGE = { min: 1, max: 30 } as const;

export const CHARGEBACK_RATE_ALARM_CONTEXT = 'chargebackRateAlarm';
/** The card schemes' monitoring starts at about 0.9 % of a month's transactions; a month with fewer than 100 settled payments says little. */
export const DEFAULT_CHARGEBACK_RATE: ChargebackRateRule = { alarmPercent: 0.9, minSettled: 100 };

/**
 * When a merchant's chargeback rate alarms: context `chargebackRateAlarm`, `{ "percent": 0.9, "minSettled": 100 }`
 * for every stage or `{ "prod": { … } }` per stage (either field may be left out). The functions get the
 * same values (the portal flags with them), and the alarm's threshold is the percent.
 */
export function chargebackRateFromContext(node: Node, stage: Stage): ChargebackRateRule {
  const value: unknown = node.tryGetContext(CHARGEBACK_RATE_ALARM_CONTEXT);
  if (value === undefined) return DEFAULT_CHARGEBACK_RATE;
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  const record = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
  const all = record(parsed);
  const chosen = all && (stage in all) ? record(all[stage]) : all;
  if (!chosen) throw new Error(`Context ${CHARGEBACK_RATE_ALARM_CONTEXT} must be {"percent": …, "minSettled": …}, got ${JSON.stringify(value)}`);
  const number = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v);
  const alarmPercent = chosen.percent === undefined ? DEFAULT_CHARGEBACK_RATE.alarmPercent : number(chosen.percent);
  const minSettled = chosen.minSettled === undefined ? DEFAULT_CHARGEBACK_RATE.minSettled : number(chosen.minSettled);
  if (typeof alarmPercent !== 'number' || !(alarmPercent > 0 && alarmPercent <= 100)) throw new Error(`Context ${CHARGEBACK_RATE_ALARM_CONTEXT} for ${stage}: percent must be a number above 0 and at most 100, got ${JSON.stringify(chosen.percent)}`);
  if (typeof minSettled !== 'number' || !Number.isInteger(minSettled) || minSettled < 0 || minSettled > 1_000_000) throw new Error(`Context ${CHARGEBACK_RATE_ALARM_CONTEXT} for ${stage}: minSettled must be a whole number from 0 to 1000000, got ${JSON.stringify(chosen.minSettled)}`);
  return { alarmPercent, minSettled };
}

/** The scheduled job that relays callbacks from the outbox (lib/jobs.ts). */
export const CALLBACK_RELAY_JOB_ID = 'DeliverCallbacks';
/** The `$default` function of a stage behind CloudFront: not-found.ts with the origin check's secret reader. */
export const FALLBACK_BEHIND_EDGE_ENTRY = 'lambdas/handlers/not-found-behind-edge.ts';
/** The route that serves the admin portal page; it alone needs the operators' sign-in configuration. */
export const ADMIN_PORTAL_ROUTE_ID = 'AdminPortal';
/** Where operators open the portal, and where Cognito's sign-in pages send them back. */
const ADMIN_PORTAL_PATH = '/admin';

/** `{ "dev": 1, "prod": 7 }` (per stage), or one value for every stage; a CLI `-c` value arrives as a string. */
export function authorizationValidityDaysFromContext(node: Node, stage: Stage): number {
  const value: unknown = node.tryGetContext(AUTHORIZATION_VALIDITY_DAYS_CONTEXT);
  const chosen = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[stage] : value;
  if (chosen === undefined) return DEFAULT_AUTHORIZATION_VALIDITY_DAYS;
  const days = typeof chosen === 'string' && chosen.trim() !== '' ? Number(chosen) : chosen;
  const { min, max } = AUTHORIZATION_VALIDITY_DAYS_RANGE;
  if (typeof days !== 'number' || !Number.isInteger(days) || days < min || days > max) {
    throw new Error(
      `Context ${AUTHORIZATION_VALIDITY_DAYS_CONTEXT} for ${stage} must be a whole number of days from ${min} to ${max}, got ${JSON.stringify(chosen)}`,
    );
  }
  return days;
}

/**
 * The hosted checkout service of one stage: the table, one Lambda behind one HTTP API route per
 * entry of the route table, one Lambda on a schedule per job, and the operators of the admin
 * portal. Merchant secrets live outside the stack (the merchant CLI creates them).
 */
export class CheckoutStack extends Stack {
  readonly stage: Stage;
  readonly table: CheckoutTable;
  readonly merchantSecrets: MerchantSecrets;
  /** The acquirer accounts' passwords (docs/acquirer-accounts.md), one secret each under its prefix. */
  readonly accountSecrets: MerchantSecrets;
  /** Apple Pay's certificates and domain-association file (docs/wallets.md). */
  readonly applePaySecrets: MerchantSecrets;
  readonly api: CheckoutApi;
  readonly operators: OperatorPool;
  readonly jobs: ScheduledJobs;
  /** Each route's function (with its role and log group) by route id, for wiring alarms to it. */
  readonly functions: ReadonlyMap<string, CheckoutFunction>;
  /** The `$default` route's function: the 404 and 405 answers to requests no route takes (lib/routes.ts FALLBACK_ROUTE). */
  readonly fallbackFunction: CheckoutFunction;
  /** Each scheduled job's function by job id. */
  readonly jobFunctions: ReadonlyMap<string, CheckoutFunction>;
  readonly authorizationValidityDays: number;
  /** The fast path and alarms of callback delivery; absent only when a test deploys other jobs. */
  readonly callbackDelivery?: CallbackDelivery;
  /** The write-once bucket of the audit chain's heads; absent only when a test deploys other jobs. */
  readonly auditAnchor?: AuditAnchor;
  /** E-mail receipts' sender, configuration set and feedback path (ADR 0037); absent on a stage that sends none. */
  readonly receiptMail?: ReceiptMail;
  /** The topic every alarm notifies. */
  readonly alarmTopic: AlarmTopic;
  /** The alarms and the dashboard. */
  readonly monitoring: Monitoring;
  /** The nested stack that holds the monitoring (its template has its own 500-resource budget). */
  readonly observability: NestedStack;
  readonly acquirer: AcquirerChoice;
  /** The S2S CARD gateway's credentials ({"clientKey","password"}), set by an operator after the first deploy. */
  readonly acquirerSecret?: secretsmanager.Secret;
  /** The key the portal's page cursors are sealed with; read by the functions that seal them only. */
  readonly cursorSecret: secretsmanager.Secret;
  /**
   * Behind CloudFront: the values CloudFront sends in x-origin-verify and every HTTP function
   * requires (replicated to us-east-1, where the edge stack reads it); absent without an edge.
   */
  readonly originSecret?: secretsmanager.Secret;
  /** The NAT egress on fixed addresses the S2S CARD gateway whitelists. */
  readonly egress?: StaticEgress;
  /** The base of every link handed out (custom domain, context, or the API's URL). */
  readonly publicBaseUrl: string;
  /** The stage's settings as built (lib/stages/<stage>.ts and the command line). */
  readonly settings: StageSettings;
  /** The acquirer timeouts every function is configured with; the acquirer routes' timeouts derive from them. */
  readonly acquirerTimeouts: AcquirerTimeouts;
  /** The X-Ray sampling rule of the stage's functions. */
  readonly tracing: Tracing;

  constructor(scope: Construct, id: string, { stage, routes = ROUTES, jobs = JOBS, authorizationValidityDays, publicBaseUrl, stageFile, ...stackProps }: CheckoutStackProps) {
    super(scope, id, { description: `Hosted checkout (${stage})`, ...stackProps });
    this.stage = stage;
    // Before anything is built: prod without a real acquirer, or a silent change of a deployed fact, stops the synth here.
    const settings = resolveStageSettings(this.node, stage, stageFile ?? STAGE_FILES[stage]);
    this.settings = settings;
    const removalPolicy = settings.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    this.authorizationValidityDays = authorizationValidityDays ?? authorizationValidityDaysFromContext(this.node, stage);
    this.acquirer = settings.acquirer;
    const customDomain: DomainSettings | undefined = settings.domain;
    this.acquirerTimeouts = settings.acquirerTimeouts ?? ACQUIRER_TIMEOUTS;

    const indexes = tableIndexesFromContext(this.node.tryGetContext(TABLE_INDEXES_CONTEXT));
    const missing = TABLE_SCHEMA.globalSecondaryIndexes.map((g) => g.indexName).filter((n) => !indexes.current.includes(n));
    if (missing.length) {
      // A migration step: the table changes, the functions of this version would fail without these indexes.
      Annotations.of(this).addWarning(`Table without the indexes ${missing.join(', ')} (context ${TABLE_INDEXES_CONTEXT}): a migration step; deploy the functions only once every index exists.`);
    }
    // No fixed physical names (table, user pool): a retained one from a failed first deploy never blocks the next.
    // A stage deployed before names were generated keeps its table and pool by naming them
    // (`-c tableName=checkout-prod -c userPoolName=Checkout-prod-operators`): without that the
    // deploy would replace them (docs/operations.md, "Stages deployed with fixed names").
    const keptTableName = settings.keepNames.tableName;
    const keptUserPoolName = settings.keepNames.userPoolName;
    this.table = new CheckoutTable(this, 'Data', { retainData: settings.retain, indexes, ...(keptTableName ? { tableName: keptTableName } : {}) });
    this.merchantSecrets = new MerchantSecrets(this, 'MerchantSecrets', { prefix: merchantSecretPrefix(stage) });
    this.accountSecrets = new MerchantSecrets(this, 'AccountSecrets', {
      prefix: accountSecretPrefix(stage),
      holds: 'Acquirer account passwords are created at run time (merchant CLI, admin portal), one per account',
    });
    this.applePaySecrets = new MerchantSecrets(this, 'ApplePaySecrets', {
      prefix: applePaySecretPrefix(stage),
      holds: 'Apple Pay merchant identity certificates and the domain-association file are put by the platform team (docs/wallets.md), one per merchant identifier',
    });
    this.api = new CheckoutApi(this, 'Api', {
      apiName: stackName(stage),
      logRetention: settings.logRetention,
      logRemovalPolicy: removalPolicy,
      // Behind CloudFront the API's own domain is the origin name; the public name is CloudFront's.
      domain: customDomain && { name: customDomain.edge?.originName ?? customDomain.name, certificateArn: customDomain.certificateArn },
      publicName: customDomain?.name,
    });
    // Links and the portal's sign-in return are built on configuration only, never on a request.
    const publicBase = publicBaseUrl ?? (this.node.tryGetContext('publicBaseUrl') as string | undefined) ?? this.api.url;
    this.publicBaseUrl = publicBase;

    let functionAcquirer: FunctionAcquirer = { name: this.acquirer.name };
    const acquirerEnvironment: Record<string, string> = { ACQUIRER: this.acquirer.name };
    if (this.acquirer.name === 's2s-card') {
      this.acquirerSecret = new secretsmanager.Secret(this, 'S2SCardCredentials', {
        description: `S2S CARD gateway credentials of ${stackName(stage)}: {"clientKey","password"} as the gateway issued them`,
        // A placeholder the connector refuses (empty clientKey) until an operator sets the real values.
        generateSecretString: { secretStringTemplate: JSON.stringify({ clientKey: '' }), generateStringKey: 'password', excludePunctuation: true },
        removalPolicy,
      });
      Validations.of(this.acquirerSecret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason: 'The gateway issues the client key and password; they are rotated with the gateway administrator, then put here (docs/operations.md, "Rotating secrets"). Secrets Manager cannot rotate them itself.',
      });
      this.egress = new StaticEgress(this, 'AcquirerEgress', { natGateways: settings.natGateways, logRetention: settings.logRetention, removalPolicy });
      functionAcquirer = {
        name: 's2s-card',
        secret: this.acquirerSecret,
        egress: { vpc: this.egress.vpc, subnets: this.egress.subnets, securityGroup: this.egress.securityGroup },
      };
      Object.assign(acquirerEnvironment, { S2S_CARD_URL: this.acquirer.url, S2S_CARD_SECRET_ID: this.acquirerSecret.secretArn });
    }
    this.operators = new OperatorPool(this, 'Operators', {
      ...(keptUserPoolName ? { userPoolName: keptUserPoolName } : {}),
      retain: settings.retain,
      portalUrl: `${publicBase}${ADMIN_PORTAL_PATH}`,
      // Unique per account, stage and region, as Cognito prefix domains must be.
      domainPrefix: `${stackName(stage).toLowerCase()}-${Aws.ACCOUNT_ID}`,
    });

    // Page cursors carry a count's running total and a store position back from the browser: sealed
    // with an HMAC whose key must be secret, or anyone could forge one (lambdas/adapters/dynamodb/cursor.ts).
    this.cursorSecret = new secretsmanager.Secret(this, 'CursorKey', {
      description: `Key of ${stackName(stage)} that seals the admin portal's page cursors (HMAC); generated, never shown`,
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy,
    });
    Validations.of(this.cursorSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'It seals the portal\'s page cursors, which live for one search: rotating it only refuses the cursors in flight (the search starts again). ' +
        'Generated by the stack and read by the four cursor functions only; rotate it by hand if it is ever exposed (docs/operations.md, "Rotating secrets").',
    });

    const metricMerchants = metricMerchantsFromContext(this.node, stage);
    const chargebackRate = chargebackRateFromContext(this.node, stage);
    const functionSettings: FunctionSettings = {
      stage,
      table: this.table,
      merchantSecrets: this.merchantSecrets,
      accountSecrets: this.accountSecrets,
      applePaySecrets: this.applePaySecrets,
      acquirer: functionAcquirer,
      cursorSecret: this.cursorSecret,
      // Every function gets the same configuration: routes (pay, capture) and jobs (reconcile)
      // both record authorizations, and they must agree on how long one is valid.
      environment: {
        TABLE_NAME: this.table.table.tableName,
        MERCHANT_SECRET_PREFIX: this.merchantSecrets.prefix,
        ACQUIRER_ACCOUNT_SECRET_PREFIX: this.accountSecrets.prefix,
        STAGE: stage,
        AUTHORIZATION_VALIDITY_DAYS: String(this.authorizationValidityDays),
        // Readable stack traces cost about 30 ms of every cold start: only outside prod. prod's source
        // maps go beside its assets (cdk.out/source-maps/) to map a trace by hand.
        ...(mapsStackTraces(stage) ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
        ...acquirerEnvironment,
        POWERTOOLS_SERVICE_NAME: 'checkout',
        POWERTOOLS_METRICS_NAMESPACE: METRIC_NAMESPACE,
        LOG_LEVEL: settings.logLevel,
        ...(metricMerchants.length ? { METRIC_MERCHANTS: metricMerchants.join(',') } : {}),
        CHARGEBACK_RATE_ALARM_PERCENT: String(chargebackRate.alarmPercent),
        CHARGEBACK_RATE_MIN_SETTLED: String(chargebackRate.minSettled),
        PUBLIC_BASE_URL: publicBase,
        // The table's stream dispatcher delivers new callbacks (lib/constructs/callback-delivery.ts).
        CALLBACK_STREAM: '1',
        // What the acquirer routes' timeouts are derived from (lib/time-budget.ts).
        ...acquirerTimeoutEnvironment(this.acquirerTimeouts),
        // Behind CloudFront the API sees CloudFront's address: the client's comes in CloudFront-Viewer-Address.
        ...(customDomain?.edge ? { CLIENT_ADDRESS_FROM: 'cloudfront' } : {}),
      },
      logRetention: settings.logRetention,
      logRemovalPolicy: removalPolicy,
      applicationLogLevel: ApplicationLogLevel[settings.logLevel],
    };

    const functions = new Map<string, CheckoutFunction>();
    // The checkout page's footer names the stage's provider; only its functions are told.
    const pageEnvironment = { ...providerEnvironment(settings.provider), ...walletEnvironment(settings.wallets, applePaySecretPrefix(stage)) };
    const checkoutPageIds = new Set(CHECKOUT_PAGE_ROUTES.map((r) => r.id));
    for (const route of deployedRoutes(routes, this.acquirer.name)) {
      if (functions.has(route.id)) throw new Error(`Duplicate route id: ${route.id}`);
      if (route.id === ADMIN_PORTAL_ROUTE_ID && route.path !== ADMIN_PORTAL_PATH) throw new Error(`The admin portal must be served at ${ADMIN_PORTAL_PATH}`);
      const routeFunction = new CheckoutFunction(this, route.id, {
        settings: functionSettings,
        purpose: `${route.method} ${route.path}`,
        entry: route.entry,
        access: route.access,
        memoryMb: route.memoryMb,
        timeoutSeconds: routeTimeoutSeconds(route, this.acquirerTimeouts),
        extraEnvironment: route.id === ADMIN_PORTAL_ROUTE_ID ? this.operators.portalEnvironment : checkoutPageIds.has(route.id) && Object.keys(pageEnvironment).length ? pageEnvironment : undefined,
        ...(customDomain?.edge ? { inject: [ORIGIN_SECRET_INJECT] } : {}),
      });
      this.api.addRoute(route, routeFunction.function, this.authorizerFor(route));
      functions.set(route.id, routeFunction);
    }
    this.functions = functions;
    this.fallbackFunction = new CheckoutFunction(this, FALLBACK_ROUTE.id, {
      settings: functionSettings,
      purpose: `${FALLBACK_ROUTE_KEY}: requests no route takes`,
      // Behind CloudFront it checks the origin header too, which takes a Secrets Manager client its plain entry does without.
      entry: customDomain?.edge ? FALLBACK_BEHIND_EDGE_ENTRY : FALLBACK_ROUTE.entry,
      access: FALLBACK_ROUTE.access,
      memoryMb: FALLBACK_ROUTE.memoryMb,
      timeoutSeconds: FALLBACK_ROUTE.timeoutSeconds,
      // It serves the stage's Apple Pay domain-association file (lambdas/handlers/not-found.ts).
      defines: appleDomainAssociationDefine(settings.wallets),
    });
    this.api.addFallbackRoute(FALLBACK_ROUTE, this.fallbackFunction.function);
    if (customDomain?.edge) this.originSecret = this.guardOrigin(stage, [...functions.values(), this.fallbackFunction]);

    // A stage without a receipt sender has no receipt job (and queues no receipt).
    const stageJobs = settings.receipts ? jobs : jobs.filter((j) => j.id !== RECEIPT_JOB_ID);
    this.jobs = new ScheduledJobs(this, 'Jobs', { jobs: stageJobs, settings: functionSettings, removalPolicy, reserveConcurrency: settings.reserveJobConcurrency });
    this.tracing = new Tracing(this, 'Tracing', { name: stackName(stage), fixedRate: settings.traceFixedRate });
    this.jobFunctions = this.jobs.functions;
    const signInImporter = this.jobFunctions.get(SIGN_IN_IMPORT_JOB_ID);
    if (signInImporter) this.operators.grantSignInEvents(signInImporter.function);
    const anchorExporter = this.jobFunctions.get(AUDIT_ANCHOR_JOB_ID);
    if (anchorExporter) this.auditAnchor = new AuditAnchor(this, 'AuditAnchor', { retentionDays: auditAnchorRetentionDaysFromContext(this.node, stage), exporter: anchorExporter });
    this.alarmTopic = new AlarmTopic(this, 'Alarms', { removalPolicy });
    // The alarms (four per route, two per function, the callbacks' and the receipts') and the
    // dashboard live in a nested stack of their own: CloudFormation allows 500 resources per stack,
    // and every route adds eleven.
    this.observability = new NestedStack(this, 'Observability', { description: `Alarms and dashboard of ${stackName(stage)}` });
    const relay = this.jobFunctions.get(CALLBACK_RELAY_JOB_ID);
    if (relay) {
      this.callbackDelivery = new CallbackDelivery(this, 'Callbacks', { settings: functionSettings, relay, removalPolicy, alarms: this.alarmTopic, alarmScope: this.observability });
    }
    const receiptSender = this.jobFunctions.get(RECEIPT_JOB_ID);
    if (receiptSender && settings.receipts) {
      this.receiptMail = new ReceiptMail(this, 'Receipts', {
        settings: functionSettings,
        receipts: settings.receipts,
        sender: receiptSender,
        deadLetterQueue: this.jobs.deadLetterQueue,
        alarms: this.alarmTopic,
        alarmScope: this.observability,
      });
      // The functions that queue or send receipts are told the stage sends them (lambdas/config.ts receiptsEnabled).
      const touchesReceipts = (table: TableAccess) => (table.items.RECEIPT ?? []).length > 0;
      const told = [
        ...deployedRoutes(routes, this.acquirer.name).filter((r) => touchesReceipts(r.access.table)).map((r) => functions.get(r.id)!),
        ...stageJobs.filter((j) => touchesReceipts(j.access.table)).map((j) => this.jobFunctions.get(j.id)!),
        ...(this.callbackDelivery && touchesReceipts(CALLBACK_DISPATCHER.access.table) ? [this.callbackDelivery.dispatcher] : []),
      ];
      for (const fn of told) fn.function.addEnvironment('RECEIPT_SENDER', settings.receipts.sender);
    }
    const otherFunctions = new Map<string, CheckoutFunction>(this.jobFunctions);
    if (this.callbackDelivery) otherFunctions.set('CallbackDispatcher', this.callbackDelivery.dispatcher);
    if (this.receiptMail) otherFunctions.set('ReceiptFeedback', this.receiptMail.feedback);
    otherFunctions.set(FALLBACK_ROUTE.id, this.fallbackFunction);
    this.monitoring = new Monitoring(this.observability, 'Monitoring', {
      stage,
      name: stackName(stage),
      topic: this.alarmTopic.topic,
      api: this.api,
      // The stage's own routes: the gateway's on an S2S CARD stage, the sandbox's elsewhere.
      routes: deployedRoutes(routes, this.acquirer.name),
      routeFunctions: this.functions,
      otherFunctions,
      jobsDeadLetterQueue: this.jobs.deadLetterQueue,
      table: this.table,
      metricMerchants,
      chargebackRate,
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topic.topicArn, description: 'Subscribe the team here: every alarm of the stage notifies this topic' });
    new CfnOutput(this, 'DashboardName', { value: this.monitoring.dashboardName, description: 'The CloudWatch dashboard of the stage' });

    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Base URL of the API (no trailing slash)' });
    new CfnOutput(this, 'TableName', { value: this.table.table.tableName });
    new CfnOutput(this, 'MerchantSecretPrefix', { value: this.merchantSecrets.prefix });
    new CfnOutput(this, 'AccountSecretPrefix', { value: this.accountSecrets.prefix, description: 'Name prefix of the acquirer accounts\' password secrets' });
    new CfnOutput(this, 'Stage', { value: stage });
    new CfnOutput(this, 'Acquirer', { value: this.acquirer.name });
    new CfnOutput(this, 'PublicBaseUrl', { value: publicBase, description: 'The base of every link and of the S2S CARD Notification URL' });
    if (this.acquirer.name === 's2s-card') {
      new CfnOutput(this, 'S2SCardUrl', { value: this.acquirer.url });
      new CfnOutput(this, 'S2SCardSecretArn', { value: this.acquirerSecret!.secretArn, description: 'Put {"clientKey","password"} here before the first payment' });
      new CfnOutput(this, 'S2SCardNotificationUrl', { value: `${publicBase}/acquirer/s2s-card/notify`, description: "The gateway account's Notification URL" });
      new CfnOutput(this, 'S2SCardEgressIps', { value: this.egress!.publicIps, description: 'Register these source addresses with the gateway' });
    }
    if (this.api.domainName) {
      new CfnOutput(this, 'DomainTarget', {
        value: this.api.domainName.regionalDomainName,
        description: `Point ${customDomain!.edge ? `${customDomain!.edge.originName} (CloudFront's origin; ${customDomain!.name} points to the distribution of ${stackName(stage)}-edge)` : customDomain!.name} here (CNAME, or an alias A record with hosted zone ${this.api.domainName.regionalHostedZoneId})`,
      });
      new CfnOutput(this, 'DomainHostedZoneId', { value: this.api.domainName.regionalHostedZoneId });
    }
    new CfnOutput(this, 'UserPoolId', {
      value: this.operators.userPool.userPoolId,
      description: 'Operators of the admin portal (no self sign-up: an administrator adds each one)',
    });
    new CfnOutput(this, 'UserPoolClientId', { value: this.operators.client.userPoolClientId });
    new CfnOutput(this, 'OperatorSignInUrl', { value: this.operators.signInPagesUrl, description: "Cognito's sign-in pages for operators (the portal sends them there)" });
    const portal = routes.find((r) => r.id === ADMIN_PORTAL_ROUTE_ID);
    if (portal) new CfnOutput(this, 'AdminPortalUrl', { value: `${publicBase}${portal.path}` });
  }

  /**
   * Closes the way around CloudFront and WAF (ADR 0027): the API's origin name answers anyone, and
   * an HTTP API has no resource policy or web ACL, so every HTTP function (routes and `$default`;
   * not the jobs, which no request reaches) refuses a request without a value of this secret in
   * x-origin-verify, which the edge stack's distribution adds. Two stacks in two regions and no
   * references between them: the secret has a fixed name (originSecretName) and a replica in
   * us-east-1, which the edge stack's origin header reads through a dynamic reference at deploy.
   */
  private guardOrigin(stage: Stage, httpFunctions: readonly CheckoutFunction[]): secretsmanager.Secret {
    const secret = new secretsmanager.Secret(this, 'OriginSecret', {
      secretName: originSecretName(stage),
      description: `Header value CloudFront adds to every request it forwards to ${stackName(stage)} (x-origin-verify); two slots, a and b, for rotation with an overlap`,
      // Slot a is what CloudFront sends first; b stays empty (accepting nothing) until the first rotation.
      generateSecretString: { secretStringTemplate: JSON.stringify({ b: '' }), generateStringKey: 'a', passwordLength: 64, excludePunctuation: true },
      // Nothing to keep: a new stack generates a new value and the edge stack's next deploy sends it.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // The replica CloudFront's stack reads; none when the API itself is in us-east-1 (a secret cannot replicate to its own region).
    const elsewhere = new CfnCondition(this, 'OriginSecretNeedsReplica', { expression: Fn.conditionNot(Fn.conditionEquals(Aws.REGION, EDGE_REGION)) });
    (secret.node.defaultChild as secretsmanager.CfnSecret).replicaRegions = Fn.conditionIf(elsewhere.logicalId, [{ Region: EDGE_REGION }], Aws.NO_VALUE) as unknown as secretsmanager.CfnSecret.ReplicaRegionProperty[];
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'CloudFront takes the value at the edge stack\'s deploy, so a rotation is a deploy: write the slot CloudFront does not send, wait for the functions\' cache, ' +
        'switch edge.originSecretSlot and deploy the edge stack; the old value stays accepted meanwhile (docs/operations.md, "Rotating secrets"). A rotation Lambda could not redeploy CloudFront.',
    });
    for (const httpFunction of httpFunctions) {
      httpFunction.function.addEnvironment('ORIGIN_SECRET_ID', secret.secretArn);
      secret.grantRead(httpFunction.role);
    }
    return secret;
  }

  /** A new kind of `auth` fails to compile here until it is given an authorizer. */
  private authorizerFor(route: RouteDefinition): IHttpRouteAuthorizer | undefined {
    const auth = route.auth;
    switch (auth) {
      case undefined:
        return undefined;
      case 'operator':
        return this.operators.authorizer;
      default: {
        const unhandled: never = auth;
        throw new Error(`Unhandled route auth: ${String(unhandled)}`);
      }
    }
  }
}
