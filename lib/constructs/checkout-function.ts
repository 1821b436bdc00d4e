import * as path from 'node:path';
import { Duration, RemovalPolicy, Stack, Stage as CdkStage, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type { AcquirerName } from '../acquirer';
import { acquirerDefine, assertLocalEsbuild, BUNDLE_ALIASES, ESBUILD_OPTIONS, mapsStackTraces, PROJECT_ROOT } from '../bundling';
import type { Stage } from '../naming';
import { bundleDefines } from '../portal-script';
import { accessForAcquirer, callsAcquirer, type TableAccess } from '../table-access';
import { DEFAULT_FUNCTION_TIMEOUT_SECONDS } from '../time-budget';
import type { CheckoutTable } from './checkout-table';
import type { MerchantSecrets } from './merchant-secrets';

export const DEFAULT_MEMORY_MB = 256;
/** One number for the stack and the local runner (lib/time-budget.ts). */
export const DEFAULT_TIMEOUT_SECONDS = DEFAULT_FUNCTION_TIMEOUT_SECONDS;

/** What a route or a job declares it touches; nothing else is granted. */
export interface FunctionAccess {
  readonly table: TableAccess;
  /** Reads the merchants' secrets (true), or also creates and rotates them ('write': the portal's merchant administration). */
  readonly merchantSecrets: boolean | 'write';
  /** Needs the acquirer's credentials without touching its records (lib/routes.ts). */
  readonly acquirerCredentials?: true;
  /** Seals the portal's page cursors (lib/routes.ts): the stack's cursor key, read by these functions only. */
  readonly cursorSecret?: true;
  /** Creates and rotates the acquirer accounts' passwords (lib/routes.ts). */
  readonly accountSecrets?: 'write';
  /** Reads Apple Pay's certificates and domain-association file (lib/routes.ts). */
  readonly applePaySecrets?: true;
}

/** The stage's acquirer as the functions see it. */
export interface FunctionAcquirer {
  readonly name: AcquirerName;
  /** The S2S CARD credentials; read only by the functions that call the gateway or verify its callbacks. */
  readonly secret?: secretsmanager.ISecret;
  /**
   * The fixed egress the gateway whitelists: functions that call it run in these subnets, whose
   * NAT gateway leaves from Elastic IPs (lib/constructs/static-egress.ts).
   */
  readonly egress?: { readonly vpc: ec2.IVpc; readonly subnets: ec2.SubnetSelection; readonly securityGroup: ec2.ISecurityGroup };
}

/** The same for every function of a stage. */
export interface FunctionSettings {
  readonly stage: Stage;
  readonly table: CheckoutTable;
  readonly merchantSecrets: MerchantSecrets;
  /** The acquirer accounts' passwords: read by every function that calls the S2S CARD gateway, written by the account administration. */
  readonly accountSecrets: MerchantSecrets;
  /** Apple Pay's certificates and domain-association file: read by the functions that declare `applePaySecrets` only. */
  readonly applePaySecrets?: MerchantSecrets;
  readonly acquirer: FunctionAcquirer;
  /**
   * The key the portal's page cursors are sealed with (a generated secret): its ARN is given as
   * CURSOR_SECRET_ID, and read granted, only to the functions that declare `cursorSecret`.
   */
  readonly cursorSecret?: secretsmanager.ISecret;
  /** The configuration lambdas/config.ts reads, shared by every function. */
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: logs.RetentionDays;
  readonly logRemovalPolicy: RemovalPolicy;
  /** The stage's level for the service's own log lines (Lambda drops lines below it). */
  readonly applicationLogLevel: lambda.ApplicationLogLevel;
}

export interface CheckoutFunctionProps {
  readonly settings: FunctionSettings;
  /** What runs it (`POST /api/v1/session`, or a job's description); names the function and its role. */
  readonly purpose: string;
  /** The handler module, relative to the project root; it exports `handler`. */
  readonly entry: string;
  readonly access: FunctionAccess;
  readonly memoryMb?: number;
  readonly timeoutSeconds?: number;
  /** Configuration only this function needs, on top of `settings.environment`. */
  readonly extraEnvironment?: Readonly<Record<string, string>>;
  /** Values compiled into the bundle (esbuild `define`): configuration too large for the environment's 4 KB. */
  readonly defines?: Readonly<Record<string, string>>;
  /** Modules bundled in and run before the entry (esbuild `inject`), relative to the project root. */
  readonly inject?: readonly string[];
  /** Concurrency set aside for this function, and its ceiling (the scheduled jobs: lib/constructs/scheduled-jobs.ts). */
  readonly reservedConcurrency?: number;
  /** How asynchronous invocations (schedules) are retried and where failures go. */
  readonly asyncInvoke?: lambda.EventInvokeConfigOptions;
}

/**
 * lib/bundling.ts expressed as NodejsFunction options, so the benchmark measures what is deployed.
 *
 * `sourceMapsTo`: where the source map goes instead of the deployed zip (prod, whose functions run
 * without --enable-source-maps: a map in the zip would only be downloaded and unpacked at every cold
 * start). Each function's map lands at `<sourceMapsTo>/index.mjs.map`, to be archived with the
 * deploy's cloud assembly; docs/operations.md says how to map a stack trace with it.
 */
export function bundlingOptions(sourceMapsTo?: string): nodejs.BundlingOptions {
  return {
    minify: ESBUILD_OPTIONS.minify,
    sourceMap: ESBUILD_OPTIONS.sourcemap,
    target: ESBUILD_OPTIONS.target,
    format: nodejs.OutputFormat.ESM,
    mainFields: [...ESBUILD_OPTIONS.mainFields],
    banner: ESBUILD_OPTIONS.banner,
    externalModules: [...ESBUILD_OPTIONS.external],
    charset: ESBUILD_OPTIONS.charset === 'utf8' ? nodejs.Charset.UTF8 : nodejs.Charset.ASCII,
    esbuildArgs: {
      '--alias': Object.entries(BUNDLE_ALIASES).map(([module, replacement]) => `${module}=${replacement}`),
      '--legal-comments': ESBUILD_OPTIONS.legalComments,
    },
    // Local esbuild only: a missing esbuild should fail the synth, not quietly pull a Docker image.
    forceDockerBundling: false,
    ...(sourceMapsTo
      ? {
          commandHooks: {
            beforeBundling: () => [],
            beforeInstall: () => [],
            afterBundling: (_inputDir: string, outputDir: string) => [
              `mkdir -p "${sourceMapsTo}"`,
              `mv "${outputDir}/index.mjs.map" "${sourceMapsTo}/index.mjs.map"`,
            ],
          },
        }
      : {}),
  };
}

/** The directory of a prod function's source map: in the cloud assembly, beside (not inside) its asset. */
export const sourceMapDirectory = (scope: Construct): string =>
  path.join(CdkStage.of(scope)?.outdir ?? 'cdk.out', 'source-maps', Stack.of(scope).stackName, ...scope.node.path.split('/').slice(1));

/**
 * One Lambda of the service (a route's or a scheduled job's): its own role, holding exactly the
 * access it declares (no managed policies), and its own log group with a retention.
 */
export class CheckoutFunction extends Construct {
  readonly function: nodejs.NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  /** What its bundle carries besides its entry (CheckoutFunctionProps.inject). */
  readonly inject: readonly string[];
  /** Where its source map goes: in its deployed asset, or (prod) the directory beside it (bundlingOptions). */
  readonly sourceMap: 'in-asset' | { readonly directory: string };

  constructor(scope: Construct, id: string, props: CheckoutFunctionProps) {
    super(scope, id);
    const { settings, access } = props;
    const description = `${props.purpose} (${settings.stage})`;
    assertLocalEsbuild();
    const acquirer = settings.acquirer;
    const usesAcquirer = callsAcquirer(access.table) || access.acquirerCredentials === true;
    const egress = usesAcquirer ? acquirer.egress : undefined;

    this.inject = props.inject ?? [];
    this.sourceMap = mapsStackTraces(settings.stage) ? 'in-asset' : { directory: sourceMapDirectory(this) };
    this.logGroup = new logs.LogGroup(this, 'LogGroup', {
      retention: settings.logRetention,
      removalPolicy: settings.logRemovalPolicy,
    });

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description,
    });

    this.function = new nodejs.NodejsFunction(this, 'Function', {
      description,
      entry: path.join(PROJECT_ROOT, props.entry),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb ?? DEFAULT_MEMORY_MB,
      timeout: Duration.seconds(props.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS),
      role: this.role,
      logGroup: this.logGroup,
      tracing: lambda.Tracing.ACTIVE,
      // JSON lines in, JSON lines out: Powertools' log lines and metrics (EMF) are JSON already, and
      // the runtime's own lines (START, REPORT, errors) become JSON too, filtered by level per stage.
      loggingFormat: lambda.LoggingFormat.JSON,
      applicationLogLevelV2: settings.applicationLogLevel,
      systemLogLevelV2: lambda.SystemLogLevel.INFO,
      // The portal's browser script is built only when this stack is bundled at all (tests synth without bundling).
      bundling: {
        ...bundlingOptions(this.sourceMap === 'in-asset' ? undefined : this.sourceMap.directory),
        // The stage's acquirer only: the other one's code is left out of every function (lambdas/wiring/acquirer.ts).
        define: { ...(Stack.of(this).bundlingRequired ? bundleDefines() : {}), ...acquirerDefine(acquirer.name), ...props.defines },
        ...(props.inject?.length ? { inject: props.inject.map((module) => path.join(PROJECT_ROOT, module)) } : {}),
      },
      environment: {
        ...settings.environment,
        ...(access.cursorSecret && settings.cursorSecret ? { CURSOR_SECRET_ID: settings.cursorSecret.secretArn } : {}),
        ...props.extraEnvironment,
      },
      ...(props.reservedConcurrency !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrency } : {}),
      ...(egress ? { vpc: egress.vpc, vpcSubnets: egress.subnets, securityGroups: [egress.securityGroup] } : {}),
      ...props.asyncInvoke,
    });

    // Instead of AWSLambdaBasicExecutionRole (any log group in the account): this one only.
    this.logGroup.grantWrite(this.role);
    // Only the stage's acquirer's item kinds: a sandbox stage grants nothing on the connector's records and back.
    settings.table.grantAccess(this.role, accessForAcquirer(access.table, acquirer.name));
    if (access.merchantSecrets === 'write') settings.merchantSecrets.grantWrite(this.role);
    else if (access.merchantSecrets) settings.merchantSecrets.grantRead(this.role);
    if (usesAcquirer && acquirer.secret) acquirer.secret.grantRead(this.role);
    // A payment may go through a merchant's own account: its password is read beside the stage's.
    if (access.accountSecrets === 'write') settings.accountSecrets.grantWrite(this.role);
    else if (callsAcquirer(access.table) && acquirer.name === 's2s-card') settings.accountSecrets.grantRead(this.role);
    if (access.cursorSecret && settings.cursorSecret) settings.cursorSecret.grantRead(this.role);
    if (access.applePaySecrets && settings.applePaySecrets) settings.applePaySecrets.grantRead(this.role);
    if (egress) {
      // Lambda's own ENI management in the VPC (CreateNetworkInterface and friends work on `*` only).
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['ec2:CreateNetworkInterface', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets', 'ec2:DeleteNetworkInterface', 'ec2:AssignPrivateIpAddresses', 'ec2:UnassignPrivateIpAddresses'],
          resources: ['*'],
        }),
      );
    }

    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: egress
        ? 'The X-Ray statement that active tracing adds (xray:PutTraceSegments, xray:PutTelemetryRecords) and Lambda\'s ' +
          'network interface actions in the egress VPC (ec2:CreateNetworkInterface and the like): neither supports resource-level permissions.'
        : 'Only the X-Ray statement that active tracing adds (xray:PutTraceSegments, xray:PutTelemetryRecords): ' +
          'X-Ray does not support resource-level permissions for these actions.',
    });
  }
}
