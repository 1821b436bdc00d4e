import * as path from 'node:path';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BUNDLE_ALIASES, ESBUILD_OPTIONS, PROJECT_ROOT } from '../bundling';
import type { Stage } from '../naming';
import { routeKey, type RouteDefinition } from '../routes';
import type { CheckoutTable } from './checkout-table';
import type { MerchantSecrets } from './merchant-secrets';

export const DEFAULT_MEMORY_MB = 256;
export const DEFAULT_TIMEOUT_SECONDS = 10;

export interface RouteFunctionProps {
  readonly route: RouteDefinition;
  readonly stage: Stage;
  readonly table: CheckoutTable;
  readonly merchantSecrets: MerchantSecrets;
  readonly logLevel: string;
  readonly logRetention: logs.RetentionDays;
  readonly logRemovalPolicy: RemovalPolicy;
}

/** lib/bundling.ts expressed as NodejsFunction options, so the benchmark measures what is deployed. */
const BUNDLING: nodejs.BundlingOptions = {
  minify: ESBUILD_OPTIONS.minify,
  sourceMap: ESBUILD_OPTIONS.sourcemap,
  target: ESBUILD_OPTIONS.target,
  format: nodejs.OutputFormat.ESM,
  mainFields: [...ESBUILD_OPTIONS.mainFields],
  banner: ESBUILD_OPTIONS.banner,
  externalModules: [...ESBUILD_OPTIONS.external],
  esbuildArgs: {
    '--alias': Object.entries(BUNDLE_ALIASES).map(([module, replacement]) => `${module}=${replacement}`),
    '--legal-comments': ESBUILD_OPTIONS.legalComments,
  },
  // Local esbuild only: a missing esbuild should fail the synth, not quietly pull a Docker image.
  forceDockerBundling: false,
};

/**
 * One route's Lambda: its own role, holding exactly the access the route declares (no managed
 * policies), and its own log group with a retention.
 */
export class RouteFunction extends Construct {
  readonly function: nodejs.NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: RouteFunctionProps) {
    super(scope, id);
    const { route, table, merchantSecrets } = props;

    this.logGroup = new logs.LogGroup(this, 'LogGroup', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `${routeKey(route)} (${props.stage})`,
    });

    this.function = new nodejs.NodejsFunction(this, 'Function', {
      description: `${routeKey(route)} (${props.stage})`,
      entry: path.join(PROJECT_ROOT, route.entry),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: route.memoryMb ?? DEFAULT_MEMORY_MB,
      timeout: Duration.seconds(route.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS),
      role: this.role,
      logGroup: this.logGroup,
      tracing: lambda.Tracing.ACTIVE,
      bundling: BUNDLING,
      environment: {
        TABLE_NAME: table.table.tableName,
        MERCHANT_SECRET_PREFIX: merchantSecrets.prefix,
        STAGE: props.stage,
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: 'checkout',
        LOG_LEVEL: props.logLevel,
      },
    });

    // Instead of AWSLambdaBasicExecutionRole (any log group in the account): this one only.
    this.logGroup.grantWrite(this.role);
    table.grantAccess(this.role, route.access.table);
    if (route.access.merchantSecrets) merchantSecrets.grantRead(this.role);

    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only the X-Ray statement that active tracing adds (xray:PutTraceSegments, xray:PutTelemetryRecords): ' +
        'X-Ray does not support resource-level permissions for these actions.',
    });
    Validations.of(this.function).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'The runtime is pinned to Node.js 22 together with the esbuild target in lib/bundling.ts and the ' +
        'benchmark; moving to a newer runtime is a deliberate change to all three, not an automatic one.',
    });
  }
}
