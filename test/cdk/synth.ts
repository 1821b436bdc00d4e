import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Stack, Validations, type AppProps, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { PROJECT_ROOT } from '../../lib/bundling';
import { CheckoutStack } from '../../lib/checkout-stack';
import { JOBS, type JobDefinition } from '../../lib/jobs';
import { stackName, type Stage } from '../../lib/naming';
import { deployedRoutes, ROUTES, type RouteDefinition } from '../../lib/routes';
import { ACCESS, NO_TABLE_ACCESS, tableAccess, type TableAccess } from '../../lib/table-access';

export interface Synthesized {
  readonly stack: CheckoutStack;
  readonly template: Template;
  /**
   * The nested stack of alarms and the dashboard, each parameter the parent passes replaced by the
   * parent's value for it, so a test names the parent's resources as it would in the parent.
   */
  readonly monitoring: Template;
  readonly nag: AwsSolutionsChecks;
}

/** A nested stack's template with `{ Ref: parameter }` replaced by what the parent passes for it. */
function nestedAsSeenByParent(parent: Template, nested: Template): Template {
  const stacks = Object.values(parent.findResources('AWS::CloudFormation::Stack')) as { Properties: { Parameters?: Record<string, unknown> } }[];
  if (stacks.length !== 1) throw new Error(`expected one nested stack, found ${stacks.length}`);
  const passed = stacks[0]!.Properties.Parameters ?? {};
  const replace = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(replace);
    if (value && typeof value === 'object') {
      const ref = (value as { Ref?: unknown }).Ref;
      if (typeof ref === 'string' && Object.keys(value).length === 1 && ref in passed) return passed[ref];
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replace(v)]));
    }
    return value;
  };
  const json = nested.toJSON() as { Parameters?: unknown; Resources: unknown };
  return Template.fromJSON({ ...json, Resources: replace(json.Resources) } as Record<string, unknown>);
}

/** The context `cdk synth` sees (cdk.json), so feature flags in tests match the deployed template. */
const cdkJsonContext = (): Record<string, unknown> =>
  JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context ?? {};

/**
 * Synthesizing a stage takes seconds, and most CDK files synthesize the same shapes. What they
 * synthesize is kept on the worker process, which outlives each file's module registry, so a Jest
 * worker synthesizes each shape once; the tests only read what was made, cdk-nag's checks and a new
 * synthesis included (test/cdk/nag.test.ts): aws-cdk-lib, constructs and cdk-nag are loaded once per
 * process (test/support/jest-runtime.js), so a stack made in an earlier file is of the classes this
 * file checks against. Their output directories
 * (the nested stacks' templates are read from there) stay in one directory per worker, removed
 * when the worker exits (or with the run's temp dir, test/support/global-teardown.ts).
 */
// Jest gives each file its own globals, `process` included; a core module is the one object shared.
interface Made {
  readonly stack: CheckoutStack;
  readonly nag: AwsSolutionsChecks;
  readonly template: Record<string, unknown>;
  readonly monitoring: Record<string, unknown>;
}
const perWorker = require('node:os') as { checkoutSynthCache?: Map<string, Made>; checkoutSynthDir?: string };
const made = (perWorker.checkoutSynthCache ??= new Map<string, Made>());
/** This file's view of what the worker made: the templates as assertion objects. */
const cache = new Map<string, Synthesized>();

/** The prefix of the directory a worker's shared synths write to. */
export const SHARED_SYNTH_DIR_PREFIX = 'checkout-cdk-shared-';

function sharedOutdir(): string {
  if (!perWorker.checkoutSynthDir) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), SHARED_SYNTH_DIR_PREFIX));
    perWorker.checkoutSynthDir = dir;
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  }
  return fs.mkdtempSync(path.join(perWorker.checkoutSynthDir, 'app-'));
}

const outdirs = new Set<string>();

/**
 * An App for a test. Without an `outdir` every App makes a `cdk.out*` directory of its own in the
 * system temp dir and leaves it there (about 120 per run); these are made here and removed after
 * the test file (cleanUpTestApps). CDK's CloudFormation schema validation is off, as in
 * `synthesize` and app.test.ts: it costs about six CPU-seconds per synth (a WebAssembly engine
 * built and run on the whole template); `npm run synth` runs it on the real templates.
 */
export function testApp(props: AppProps = {}): App {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'checkout-cdk-test-'));
  outdirs.add(outdir);
  return new App({ builtinCloudFormationValidation: false, ...props, context: { ...NO_STACK_TRACES, ...props.context }, outdir });
}

/**
 * No stack traces in construct metadata: debugging aids no test reads (the CDK CLI leaves out the
 * metadata ones unless run with `--debug`). Every construct and CloudFormation element would
 * otherwise capture one, and under Jest each capture is source-mapped.
 */
const NO_STACK_TRACES = { 'aws:cdk:disable-stack-trace': true, 'aws:cdk:disable-creation-stack-traces': true } as const;

/** The output directories of the apps made so far and not yet removed. */
export const testAppOutdirs = (): string[] => [...outdirs];

/** Removes the output directories of the apps testApp made; every test file does it after its tests. */
export function cleanUpTestApps(): void {
  for (const dir of outdirs) fs.rmSync(dir, { recursive: true, force: true });
  outdirs.clear();
}
afterAll(cleanUpTestApps);

/**
 * The stack of one stage, built as bin/checkout.ts builds it (cdk-nag registered on the app) but
 * without bundling: no stack is listed in `aws:cdk:bundling-stacks`, so esbuild never runs. CDK's
 * CloudFormation schema validation (about ten seconds) is left to app.test.ts, which runs the real app.
 */
/** The routes a stage deploys as the tests synthesize it: the sandbox's on dev, the connector's on staging and prod (lib/stages). */
export const stageRoutes = (stage: Stage): RouteDefinition[] => deployedRoutes(ROUTES, stage === 'dev' ? 'sandbox' : 's2s-card');

/** staging and prod run on the S2S CARD connector, whose URL lib/stages leaves to the command line: the tests give it, as a deploy would. */
export const PROD_ACQUIRER_CONTEXT = { acquirer: 's2s-card', s2sCardUrl: 'https://gateway.example.com/post' } as const;

/**
 * lib/stages names no e-mail receipts sender (the platform team writes the one it verified in SES):
 * the tests synthesize every stage with one, as a stage that sends receipts is deployed;
 * test/cdk/receipts.test.ts also synthesizes one without.
 */
export const RECEIPTS_CONTEXT = { receiptSender: 'receipts@pay.example.com' } as const;

export function synthesize(
  stage: Stage,
  options: {
    routes?: readonly RouteDefinition[];
    jobs?: readonly JobDefinition[];
    context?: Record<string, unknown>;
  } = {},
): Synthesized {
  const routes = options.routes ?? ROUTES;
  const jobs = options.jobs ?? JOBS;
  const context = { ...RECEIPTS_CONTEXT, ...(stage === 'dev' ? {} : PROD_ACQUIRER_CONTEXT), ...options.context };
  const key = JSON.stringify([stage, routes, jobs, context]);
  const cached = cache.get(key);
  if (cached) return cached;
  const shared = made.get(key) ?? make(stage, routes, jobs, context);
  made.set(key, shared);
  const fromJson = (json: Record<string, unknown>) => Template.fromJSON(json, { skipCyclicalDependenciesCheck: true });
  const synthesized = { stack: shared.stack, nag: shared.nag, template: fromJson(shared.template), monitoring: fromJson(shared.monitoring) };
  cache.set(key, synthesized);
  return synthesized;
}

function make(stage: Stage, routes: readonly RouteDefinition[], jobs: readonly JobDefinition[], context: Record<string, unknown>): Made {
  const app = new App({
    context: { ...cdkJsonContext(), ...NO_STACK_TRACES, stage, ...context, 'aws:cdk:bundling-stacks': [] },
    builtinCloudFormationValidation: false,
    outdir: sharedOutdir(),
  });
  const nag = new AwsSolutionsChecks(app);
  Validations.of(app).addPlugins(nag);
  const stack = new CheckoutStack(app, stackName(stage), { stage, routes, jobs });
  const template = Template.fromStack(stack);
  return { stack, nag, template: template.toJSON(), monitoring: nestedAsSeenByParent(template, Template.fromStack(stack.observability)).toJSON() };
}

/** The context value cdk.json gives `name` (what `cdk synth` sees). */
export const cdkJsonContextValue = (name: string): unknown => cdkJsonContext()[name];

export const logicalId = (construct: IConstruct): string => {
  const stack = Stack.of(construct);
  return stack.getLogicalId((construct.node.defaultChild ?? construct) as CfnElement);
};

/**
 * Table access of every shape: none, only reads (items and indexes), writes (which bring the audit
 * Deny), and the audit log's append.
 */
export const TABLE_ACCESS_SAMPLES: Readonly<Record<string, TableAccess>> = {
  none: NO_TABLE_ACCESS,
  reads: tableAccess({ items: { PAYMENT: ['GetItem', 'Query'], MERCHANT: ['GetItem'], CARDTOKEN: ['BatchGetItem', 'GetItem'] }, indexes: ['lookup', 'searchKeys'] }),
  writes: tableAccess(ACCESS.paymentChange, ACCESS.acquirerAuthorizations, { items: { PAYMENT: ['PutItem'] }, indexes: ['work'] }),
  audit: tableAccess(ACCESS.auditAppend, ACCESS.auditHistory),
};
const TABLE_ACCESS_KINDS = Object.keys(TABLE_ACCESS_SAMPLES);

/**
 * A route table with one route per combination of table access and secrets access (and sizing
 * overrides, and every other route behind the operator authorizer), so the rules are proven for
 * shapes of access ROUTES does not use yet.
 */
export const ACCESS_MATRIX_ROUTES: readonly RouteDefinition[] = TABLE_ACCESS_KINDS.flatMap((table, i) =>
  [false, true].map(
    (merchantSecrets): RouteDefinition => ({
      id: `Probe${table}${merchantSecrets ? 'WithSecrets' : ''}`,
      method: (['GET', 'POST', 'PUT'] as const)[i % 3]!,
      path: `/probe/${table}/${merchantSecrets ? 'secrets' : 'plain'}/{id}`,
      entry: ROUTES[0]!.entry,
      access: { table: TABLE_ACCESS_SAMPLES[table]!, merchantSecrets },
      throttle: { rateLimit: 10 + i, burstLimit: 20 + i },
      ...(merchantSecrets ? { memoryMb: 512, timeoutSeconds: 29 } : { auth: 'operator' as const, role: 'viewer' as const }),
    }),
  ),
);

/** The same combinations as scheduled jobs, at different intervals. */
export const ACCESS_MATRIX_JOBS: readonly JobDefinition[] = TABLE_ACCESS_KINDS.flatMap((table, i) =>
  [false, true].map(
    (merchantSecrets): JobDefinition => ({
      id: `ProbeJob${table}${merchantSecrets ? 'WithSecrets' : ''}`,
      entry: JOBS[0]!.entry,
      everyMinutes: [1, 15, 24 * 60, 5][i]!,
      access: { table: TABLE_ACCESS_SAMPLES[table]!, merchantSecrets },
      timeoutSeconds: merchantSecrets ? 45 : 30,
      description: `Probe job (table ${table}, secrets ${merchantSecrets})`,
    }),
  ),
);

/**
 * A CloudFormation value as one readable string: `{ Ref: X }` becomes `${X}`, `{ Fn::GetAtt: [X, Y] }`
 * becomes `${X.Y}`, and `Fn::Join` is joined.
 */
export function flatten(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (typeof v.Ref === 'string') return `\${${v.Ref}}`;
    if (Array.isArray(v['Fn::GetAtt'])) return `\${${(v['Fn::GetAtt'] as string[]).join('.')}}`;
    if (Array.isArray(v['Fn::Join'])) {
      const [delimiter, parts] = v['Fn::Join'] as [string, unknown[]];
      return parts.map(flatten).join(delimiter);
    }
  }
  throw new Error(`Cannot flatten ${JSON.stringify(value)}`);
}

export type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[]; DeletionPolicy?: string; UpdateReplacePolicy?: string };

export const resourcesOfType = (template: Template, type: string): Record<string, Resource> =>
  template.findResources(type) as Record<string, Resource>;

export function resource(template: Template, id: string): Resource {
  const found = (template.toJSON().Resources as Record<string, Resource>)[id];
  if (!found) throw new Error(`No resource ${id}`);
  return found;
}
