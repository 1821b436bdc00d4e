import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { CheckoutApi } from './constructs/checkout-api';
import { CheckoutTable } from './constructs/checkout-table';
import { MerchantSecrets } from './constructs/merchant-secrets';
import { RouteFunction } from './constructs/route-function';
import { merchantSecretPrefix, stackName, tableName, type Stage } from './naming';
import { ROUTES, type RouteDefinition } from './routes';

export interface CheckoutStackProps extends StackProps {
  readonly stage: Stage;
  /** The route table to deploy; only tests pass another one (to cover every kind of access). */
  readonly routes?: readonly RouteDefinition[];
}

interface StageSettings {
  /** Keep data and logs when the stack is deleted. */
  readonly retain: boolean;
  readonly logRetention: RetentionDays;
  readonly logLevel: 'DEBUG' | 'INFO';
}

const STAGE_SETTINGS: Readonly<Record<Stage, StageSettings>> = {
  dev: { retain: false, logRetention: RetentionDays.ONE_MONTH, logLevel: 'DEBUG' },
  staging: { retain: false, logRetention: RetentionDays.THREE_MONTHS, logLevel: 'INFO' },
  prod: { retain: true, logRetention: RetentionDays.ONE_YEAR, logLevel: 'INFO' },
};

/**
 * The hosted checkout service of one stage: the table, and one Lambda behind one HTTP API route per
 * entry of the route table. Merchant secrets live outside the stack (the merchant CLI creates them).
 */
export class CheckoutStack extends Stack {
  readonly stage: Stage;
  readonly table: CheckoutTable;
  readonly merchantSecrets: MerchantSecrets;
  readonly api: CheckoutApi;
  /** Each route's function (with its role and log group) by route id, for wiring schedules or alarms to it. */
  readonly functions: ReadonlyMap<string, RouteFunction>;

  constructor(scope: Construct, id: string, { stage, routes = ROUTES, ...stackProps }: CheckoutStackProps) {
    super(scope, id, { description: `Hosted checkout (${stage})`, ...stackProps });
    this.stage = stage;
    const settings = STAGE_SETTINGS[stage];
    const logRemovalPolicy = settings.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    this.table = new CheckoutTable(this, 'Data', { tableName: tableName(stage), retainData: settings.retain });
    this.merchantSecrets = new MerchantSecrets(this, 'MerchantSecrets', { prefix: merchantSecretPrefix(stage) });
    this.api = new CheckoutApi(this, 'Api', {
      apiName: stackName(stage),
      logRetention: settings.logRetention,
      logRemovalPolicy,
    });

    const functions = new Map<string, RouteFunction>();
    for (const route of routes) {
      if (functions.has(route.id)) throw new Error(`Duplicate route id: ${route.id}`);
      const routeFunction = new RouteFunction(this, route.id, {
        route,
        stage,
        table: this.table,
        merchantSecrets: this.merchantSecrets,
        logLevel: settings.logLevel,
        logRetention: settings.logRetention,
        logRemovalPolicy,
      });
      this.api.addRoute(route, routeFunction.function);
      functions.set(route.id, routeFunction);
    }
    this.functions = functions;

    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Base URL of the API (no trailing slash)' });
    new CfnOutput(this, 'TableName', { value: this.table.table.tableName });
    new CfnOutput(this, 'MerchantSecretPrefix', { value: this.merchantSecrets.prefix });
    new CfnOutput(this, 'Stage', { value: stage });
  }
}
