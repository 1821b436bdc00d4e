import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { CheckoutStack } from '../../lib/checkout-stack';
import { CheckoutEdgeStack, edgeStackName } from '../../lib/edge-stack';
import { PROJECT_ROOT } from '../../lib/bundling';
import { STAGES, stackName, type Stage } from '../../lib/naming';
import type { CostRow } from './keys';

/**
 * The all-in cost model: what a million completed checkouts cost with everything they touch, and
 * what a stage costs a month with no traffic at all. Counts (alarms and their metrics, NAT gateways,
 * addresses, endpoints, keys, secrets, schedules, the sampling rule, the WAF's rules) are read from
 * the synthesized templates, so the model follows the stack; per-checkout quantities (requests,
 * invocations, handler time, table units, Secrets Manager calls, log bytes, response bytes, acquirer
 * calls) are measured by the key-heat run (keys.ts). What neither can know is a named assumption.
 */

/** us-east-1 list prices (on-demand, no free tier, no savings plan), each with where it is published. */
export const LIST_PRICES = {
  asOf: '2026-11-25',
  httpApiPerMillion: { usd: 1.0, source: 'https://aws.amazon.com/api-gateway/pricing/ (HTTP APIs, first 300 million a month)' },
  lambdaArmGbSecond: { usd: 0.0000133334, source: 'https://aws.amazon.com/lambda/pricing/ (Arm, first 7.5 billion GB-s)' },
  lambdaPerMillionRequests: { usd: 0.2, source: 'https://aws.amazon.com/lambda/pricing/' },
  dynamodbPerMillionWru: { usd: 0.625, source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/' },
  dynamodbPerMillionRru: { usd: 0.125, source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/' },
  secretsManagerPer10kCalls: { usd: 0.05, source: 'https://aws.amazon.com/secrets-manager/pricing/' },
  secretsManagerPerSecretMonth: { usd: 0.4, source: 'https://aws.amazon.com/secrets-manager/pricing/' },
  logsIngestionPerGb: { usd: 0.5, source: 'https://aws.amazon.com/cloudwatch/pricing/ (Logs, standard ingestion)' },
  logsStoragePerGbMonth: { usd: 0.03, source: 'https://aws.amazon.com/cloudwatch/pricing/ (Logs, archived, compressed)' },
  alarmPerMetricMonth: { usd: 0.1, source: 'https://aws.amazon.com/cloudwatch/pricing/ (standard-resolution alarm, per metric; a metric-math alarm per metric in it)' },
  dashboardPerMonth: { usd: 3.0, source: 'https://aws.amazon.com/cloudwatch/pricing/ (beyond the account\'s three free dashboards)' },
  xrayPerMillionTraces: { usd: 5.0, source: 'https://aws.amazon.com/xray/pricing/ (traces recorded)' },
  natGatewayHour: { usd: 0.045, source: 'https://aws.amazon.com/vpc/pricing/ (NAT gateway)' },
  natGatewayPerGb: { usd: 0.045, source: 'https://aws.amazon.com/vpc/pricing/ (NAT gateway data processed)' },
  publicIpv4Hour: { usd: 0.005, source: 'https://aws.amazon.com/vpc/pricing/ (public IPv4 address, in use or not)' },
  interfaceEndpointHourPerAz: { usd: 0.01, source: 'https://aws.amazon.com/privatelink/pricing/' },
  interfaceEndpointPerGb: { usd: 0.01, source: 'https://aws.amazon.com/privatelink/pricing/' },
  dataTransferOutPerGb: { usd: 0.09, source: 'https://aws.amazon.com/ec2/pricing/on-demand/ (data transfer out to the internet, first 10 TB)' },
  kmsKeyMonth: { usd: 1.0, source: 'https://aws.amazon.com/kms/pricing/ (customer managed key)' },
  wafWebAclMonth: { usd: 5.0, source: 'https://aws.amazon.com/waf/pricing/' },
  wafRuleMonth: { usd: 1.0, source: 'https://aws.amazon.com/waf/pricing/ (per rule or managed rule group)' },
  wafPerMillionRequests: { usd: 0.6, source: 'https://aws.amazon.com/waf/pricing/' },
  cloudFrontPerMillionHttps: { usd: 1.0, source: 'https://aws.amazon.com/cloudfront/pricing/ ($0.0100 per 10,000 HTTPS requests, North America)' },
  cloudFrontPerGb: { usd: 0.085, source: 'https://aws.amazon.com/cloudfront/pricing/ (first 10 TB, North America)' },
  s3PutPer1000: { usd: 0.005, source: 'https://aws.amazon.com/s3/pricing/ (PUT, S3 Standard)' },
} as const;

/** What the model cannot measure or read, each stated in the report. */
export const ASSUMPTIONS = {
  hoursPerMonth: { value: 730, why: 'AWS bills a month as 730 hours' },
  gatewayLatencyMs: { value: 600, why: 'time a function waits for the S2S CARD gateway per call (an authorization\'s typical answer; the local run calls the sandbox in-process)' },
  gatewayBytesPerCall: { value: 6_000, why: 'bytes through NAT per gateway call: TLS handshake, form request and JSON answer' },
  platformLogBytesPerInvocation: { value: 700, why: 'Lambda\'s own JSON lines per invocation (platform.start, platform.report), not written by our code' },
  logCompression: { value: 0.15, why: 'stored (compressed) size of log text, for archived storage' },
  xraySegmentBytes: { value: 1_500, why: 'bytes a traced function in the VPC sends to X-Ray through NAT (no X-Ray endpoint)' },
  idleJobRunMs: { value: 150, why: 'duration of a scheduled run that finds nothing due (a few index queries)' },
  idleJobReadUnits: { value: 2, why: 'read units of such a run (its shard queries, eventually consistent, empty)' },
  defaultTraceRate: { value: 0.05, why: 'X-Ray\'s default rule beyond its reservoir, when the template has no sampling rule' },
  anchorPutsPerDay: { value: 25, why: 'the audit anchor export: a checkpoint an hour when the log moved, and a day\'s close' },
} as const;

export const GOALS = { allInPerMillion: 18, idlePerMonthProd: 90 } as const;

type Resources = Record<string, { Type: string; Properties?: Record<string, any> }>;

/** The counts the model takes from a stage's templates (the stack, its nested monitoring stack and its edge stack). */
export interface StageCounts {
  readonly stage: Stage;
  readonly functions: number;
  readonly alarms: number;
  readonly alarmMetrics: number;
  readonly dashboards: number;
  readonly natGateways: number;
  readonly publicIps: number;
  /** Interface endpoints times their subnets (one hourly charge per Availability Zone). */
  readonly endpointAzs: number;
  readonly endpointServices: readonly string[];
  readonly kmsKeys: number;
  readonly secrets: number;
  readonly webAcls: number;
  readonly wafRules: number;
  readonly distributions: number;
  /** Scheduled invocations a month: every target of every rule, at its rate. */
  readonly scheduledInvocations: number;
  readonly trace: { readonly reservoirPerSecond: number; readonly fixedRate: number; readonly fromTemplate: boolean };
  /** Bytes of one API access log line, its format filled with representative values. */
  readonly accessLogLineBytes: number;
  readonly logRetentionMonths: number;
  /** Functions in the egress VPC by logical id (their gateway calls and traces go through NAT). */
  readonly vpcFunctions: number;
}

const cdkJsonContext = (): Record<string, unknown> => JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context ?? {};

const resourcesOf = (stack: Stack): Resources => (Template.fromStack(stack).toJSON() as { Resources: Resources }).Resources;
const ofType = (r: Resources, type: string) => Object.values(r).filter((x) => x.Type === type);

/** `rate(1 minute)`, `rate(2 hours)`… in invocations per month per target. */
function ratePerMonth(expression: string, hours: number): number {
  const m = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (!m) throw new Error(`cost model: unknown schedule ${expression}`);
  const minutes = Number(m[1]) * (m[2]!.startsWith('minute') ? 1 : m[2]!.startsWith('hour') ? 60 : 1440);
  return (hours * 60) / minutes;
}

/**
 * Synthesizes a stage as `cdk synth -c stage=…` would (bundling skipped) and counts. The gateway's
 * URL is a placeholder where the stage file has none; a custom domain only if the stage file has
 * one. `edge` adds CloudFront and WAF for a placeholder domain, to price that option.
 */
export function stageCounts(stage: Stage, options: { edge?: boolean } = {}): StageCounts {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'checkout-cost-'));
  try {
    const context: Record<string, unknown> = { ...cdkJsonContext(), stage, 'aws:cdk:bundling-stacks': [] };
    if (stage !== 'dev') context.s2sCardUrl ??= 'https://gateway.example.com/post';
    const app = new App({ context, outdir });
    const stack = new CheckoutStack(app, stackName(stage), { stage });
    const domain = stack.settings.domain;
    const edgeDomain = domain?.edge
      ? { ...domain, edge: domain.edge }
      : options.edge
        ? { name: 'pay.example.com', certificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/placeholder', edge: { certificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/placeholder', originName: 'origin.pay.example.com' } }
        : undefined;
    // Every stack is built before the first template is read (reading one synthesizes the app).
    const edge = edgeDomain ? new CheckoutEdgeStack(app, edgeStackName(stage), { stage, domain: edgeDomain }) : undefined;
    const templates = [resourcesOf(stack), resourcesOf(stack.observability), ...(edge ? [resourcesOf(edge)] : [])];
    const all: Resources = Object.assign({}, ...templates);
    const alarms = ofType(all, 'AWS::CloudWatch::Alarm');
    const alarmMetrics = alarms.reduce((n, a) => n + (Array.isArray(a.Properties?.Metrics) ? a.Properties!.Metrics.filter((m: { MetricStat?: unknown }) => m.MetricStat).length : 1), 0);
    const endpoints = ofType(all, 'AWS::EC2::VPCEndpoint').filter((e) => e.Properties?.VpcEndpointType === 'Interface');
    const rules = ofType(all, 'AWS::Events::Rule').filter((r) => typeof r.Properties?.ScheduleExpression === 'string');
    const hours = ASSUMPTIONS.hoursPerMonth.value;
    const sampling = ofType(all, 'AWS::XRay::SamplingRule')[0]?.Properties?.SamplingRule as { ReservoirSize: number; FixedRate: number } | undefined;
    const stage0 = ofType(all, 'AWS::ApiGatewayV2::Stage')[0];
    const format = String(stage0?.Properties?.AccessLogSettings?.Format ?? '');
    // Each $context variable filled with a value of typical length (a user agent is the long one).
    const accessLogLineBytes = Buffer.byteLength(format.replace(/\$context\.identity\.userAgent/g, 'x'.repeat(110)).replace(/\$context\.[\w.]+/g, 'x'.repeat(20))) + 1;
    const retentions = ofType(all, 'AWS::Logs::LogGroup').map((g) => Number(g.Properties?.RetentionInDays ?? 0)).filter((d) => d > 0);
    const functions = Object.entries(all).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
    return {
      stage,
      functions: functions.length,
      alarms: alarms.length,
      alarmMetrics,
      dashboards: ofType(all, 'AWS::CloudWatch::Dashboard').length,
      natGateways: ofType(all, 'AWS::EC2::NatGateway').length,
      publicIps: ofType(all, 'AWS::EC2::EIP').length,
      endpointAzs: endpoints.reduce((n, e) => n + (e.Properties?.SubnetIds?.length ?? 1), 0),
      endpointServices: endpoints.map((e) => JSON.stringify(e.Properties?.ServiceName).replace(/.*(secretsmanager|xray|logs|monitoring|dynamodb|sts)[^"]*".*/, '$1')),
      kmsKeys: ofType(all, 'AWS::KMS::Key').length,
      secrets: ofType(all, 'AWS::SecretsManager::Secret').length,
      webAcls: ofType(all, 'AWS::WAFv2::WebACL').length,
      wafRules: ofType(all, 'AWS::WAFv2::WebACL').reduce((n, w) => n + (w.Properties?.Rules?.length ?? 0), 0),
      distributions: ofType(all, 'AWS::CloudFront::Distribution').length,
      scheduledInvocations: rules.reduce((n, r) => n + ratePerMonth(r.Properties!.ScheduleExpression, hours) * (r.Properties!.Targets?.length ?? 1), 0),
      trace: sampling ? { reservoirPerSecond: sampling.ReservoirSize, fixedRate: sampling.FixedRate, fromTemplate: true } : { reservoirPerSecond: 1, fixedRate: ASSUMPTIONS.defaultTraceRate.value, fromTemplate: false },
      accessLogLineBytes,
      logRetentionMonths: retentions.length ? Math.max(...retentions) / 30 : 1,
      vpcFunctions: functions.filter(([, f]) => f.Properties?.VpcConfig).length,
    };
  } finally {
    fs.rmSync(outdir, { recursive: true, force: true });
  }
}

export type Lines = Readonly<Record<string, number>>;
const GB = 1024 ** 3;
const MILLION = 1_000_000;
const sum = (lines: Lines) => Object.values(lines).reduce((a, b) => a + b, 0);

/** Dollars per million completed checkouts of one flow on one stage, by line. */
export function allInPerMillion(row: CostRow, counts: StageCounts, options: { gatewayInVpc: boolean; payMemoryGb: number }): Lines {
  const p = LIST_PRICES;
  const a = ASSUMPTIONS;
  const m = row.measured;
  const gatewaySeconds = (m.acquirerCalls * a.gatewayLatencyMs.value) / 1000;
  const lambdaGbSeconds = m.gbSeconds + gatewaySeconds * options.payMemoryGb;
  const logBytes = m.logBytes + m.invocations * a.platformLogBytesPerInvocation.value + m.apiRequests * counts.accessLogLineBytes;
  const traces = m.apiRequests * counts.trace.fixedRate;
  const natBytes = options.gatewayInVpc ? m.acquirerCalls * a.gatewayBytesPerCall.value + traces * a.xraySegmentBytes.value : 0;
  return {
    'API Gateway': m.apiRequests * p.httpApiPerMillion.usd,
    Lambda: m.invocations * p.lambdaPerMillionRequests.usd + lambdaGbSeconds * p.lambdaArmGbSecond.usd * MILLION,
    'DynamoDB writes': row.dollars.dynamodbWrites,
    'DynamoDB reads': row.dollars.dynamodbReads,
    'Secrets Manager calls': row.dollars.secrets,
    'CloudWatch Logs': ((logBytes * MILLION) / GB) * (p.logsIngestionPerGb.usd + a.logCompression.value * p.logsStoragePerGbMonth.usd * counts.logRetentionMonths),
    'X-Ray': traces * p.xrayPerMillionTraces.usd,
    'NAT (per GB)': ((natBytes * MILLION) / GB) * p.natGatewayPerGb.usd,
    'Data transfer out': ((m.responseBytes * MILLION) / GB) * p.dataTransferOutPerGb.usd,
  };
}

/** CloudFront and WAF in front of the API, per million checkouts, when a domain has edge settings. */
export function edgePerMillion(row: CostRow): Lines {
  const p = LIST_PRICES;
  return {
    'CloudFront requests': row.measured.apiRequests * p.cloudFrontPerMillionHttps.usd,
    'CloudFront transfer (replaces data transfer out)': ((row.measured.responseBytes * MILLION) / GB) * (p.cloudFrontPerGb.usd - p.dataTransferOutPerGb.usd),
    'WAF requests': row.measured.apiRequests * p.wafPerMillionRequests.usd,
  };
}

/** Dollars a month of a stage with no traffic, by line. */
export function idlePerMonth(c: StageCounts, options: { jobMemoryGb: number }): Lines {
  const p = LIST_PRICES;
  const a = ASSUMPTIONS;
  const hours = a.hoursPerMonth.value;
  // One trace a second from the reservoir at most, and the fixed rate of the rest of the ticks' runs.
  const minutes = hours * 60;
  const tracedJobRuns = Math.min(c.scheduledInvocations, minutes * c.trace.reservoirPerSecond) + Math.max(0, c.scheduledInvocations - minutes * c.trace.reservoirPerSecond) * c.trace.fixedRate;
  return {
    'NAT gateway hours': c.natGateways * hours * p.natGatewayHour.usd,
    'Public IPv4 addresses': c.publicIps * hours * p.publicIpv4Hour.usd,
    'VPC interface endpoints': c.endpointAzs * hours * p.interfaceEndpointHourPerAz.usd,
    'Alarms (per metric)': c.alarmMetrics * p.alarmPerMetricMonth.usd,
    Dashboard: c.dashboards * p.dashboardPerMonth.usd,
    'Secrets (the stack\'s own)': c.secrets * p.secretsManagerPerSecretMonth.usd,
    'KMS keys': c.kmsKeys * p.kmsKeyMonth.usd,
    'WAF web ACL and rules': c.webAcls * p.wafWebAclMonth.usd + c.wafRules * p.wafRuleMonth.usd,
    'Scheduled job runs (Lambda)': (c.scheduledInvocations / MILLION) * p.lambdaPerMillionRequests.usd + c.scheduledInvocations * (a.idleJobRunMs.value / 1000) * options.jobMemoryGb * p.lambdaArmGbSecond.usd,
    'Scheduled job runs (DynamoDB, Logs, X-Ray)':
      (c.scheduledInvocations * a.idleJobReadUnits.value * p.dynamodbPerMillionRru.usd) / MILLION +
      ((c.scheduledInvocations * a.platformLogBytesPerInvocation.value) / GB) * p.logsIngestionPerGb.usd +
      (tracedJobRuns / MILLION) * p.xrayPerMillionTraces.usd,
    'Audit anchors (S3 puts)': ((a.anchorPutsPerDay.value * 30) / 1000) * p.s3PutPer1000.usd,
  };
}

const usd = (x: number) => `$${x.toFixed(2)}`;
const dominant = (lines: Lines) => Object.entries(lines).sort(([, a], [, b]) => b - a).slice(0, 2).map(([k, v]) => `${k} ${usd(v)}`).join(', ');

export interface CostModel {
  readonly rows: readonly CostRow[];
  readonly counts: readonly StageCounts[];
  readonly edge: StageCounts;
  readonly payMemoryGb: number;
  readonly jobMemoryGb: number;
}

/** Prod with the gateway: the goal's shape. */
function prodAllIn(model: CostModel, row: CostRow): Lines {
  const prod = model.counts.find((c) => c.stage === 'prod')!;
  return allInPerMillion(row, prod, { gatewayInVpc: prod.natGateways > 0, payMemoryGb: model.payMemoryGb });
}

/** The two lines `npm run bench` prints. */
export function costLines(model: CostModel): string[] {
  const plain = model.rows.find((r) => r.flow === 'plain') ?? model.rows[0]!;
  const allIn = prodAllIn(model, plain);
  const prod = model.counts.find((c) => c.stage === 'prod')!;
  const idle = idlePerMonth(prod, { jobMemoryGb: model.jobMemoryGb });
  const verdict = (x: number, goal: number) => (x <= goal ? `goal ≤ $${goal} met` : `goal ≤ $${goal} NOT met`);
  return [
    `cost: all-in ${usd(sum(allIn))} per million checkouts (prod, plain flow; ${verdict(sum(allIn), GOALS.allInPerMillion)}; largest: ${dominant(allIn)})`,
    `cost: idle ${usd(sum(idle))} per month (prod, no traffic; ${verdict(sum(idle), GOALS.idlePerMonthProd)}; largest: ${dominant(idle)}), plus ${usd(LIST_PRICES.secretsManagerPerSecretMonth.usd)} per merchant secret`,
  ];
}

export const COST_SECTION_START = '<!-- cost:start -->';
export const COST_SECTION_END = '<!-- cost:end -->';

/** The "All-in cost" section of docs/benchmarks.md. */
export function renderCostSection(model: CostModel): string[] {
  const out: string[] = [
    '## All-in cost: per million checkouts, and idle per month',
    '',
    `Measured per checkout by the key-heat run above (requests, invocations, handler time, table units, Secrets Manager calls,`,
    'the bytes our handlers logged, the bytes of the answers, the acquirer calls), counted from the synthesized templates',
    '(alarms and their metrics, NAT gateways, addresses, interface endpoints, keys, secrets, schedules, the X-Ray sampling rule,',
    'the WAF\'s rules; `test/bench/cost-model.ts` synthesizes each stage as `cdk synth` does), priced at the list prices below.',
    '',
    '### Per million completed checkouts',
    '',
  ];
  const stages = model.counts;
  for (const row of model.rows) {
    const per = stages.map((c) => ({ c, lines: allInPerMillion(row, c, { gatewayInVpc: c.natGateways > 0, payMemoryGb: model.payMemoryGb }) }));
    const names = Object.keys(per[0]!.lines);
    out.push(`**${row.flow} flow** (${row.checkouts} checkouts measured):`, '', `| line | ${per.map((x) => x.c.stage).join(' | ')} |`, `|---|${per.map(() => '---:').join('|')}|`);
    for (const n of names) out.push(`| ${n} | ${per.map((x) => usd(x.lines[n]!)).join(' | ')} |`);
    out.push(`| **all-in** | ${per.map((x) => `**${usd(sum(x.lines))}**`).join(' | ')} |`, '');
  }
  const plain = model.rows.find((r) => r.flow === 'plain') ?? model.rows[0]!;
  const m = plain.measured;
  out.push(
    `Measured per plain checkout: ${m.apiRequests} API requests, ${m.invocations} invocations, ${m.gbSeconds.toFixed(4)} GB-s of handler time, ${m.acquirerCalls.toFixed(2)} acquirer calls,`,
    `${Math.round(m.logBytes)} bytes of log lines written by our handlers, ${Math.round(m.responseBytes)} bytes of answers.`,
    '',
    `With CloudFront and WAF in front (a custom domain with edge settings), add per million: ${Object.entries(edgePerMillion(plain)).map(([k, v]) => `${k} ${usd(v)}`).join(', ')}.`,
    '',
    '### Idle, per month, per stage (no traffic)',
    '',
    `| line | ${stages.map((c) => c.stage).join(' | ')} | prod with CloudFront and WAF |`,
    `|---|${stages.map(() => '---:').join('|')}|---:|`,
  );
  const idles = [...stages, model.edge].map((c) => idlePerMonth(c, { jobMemoryGb: model.jobMemoryGb }));
  for (const n of Object.keys(idles[0]!)) out.push(`| ${n} | ${idles.map((l) => usd(l[n]!)).join(' | ')} |`);
  out.push(`| **idle** | ${idles.map((l) => `**${usd(sum(l))}**`).join(' | ')} |`, '', `Plus ${usd(LIST_PRICES.secretsManagerPerSecretMonth.usd)} a month per merchant (its secret).`, '', '| counted from the templates | ' + [...stages.map((c) => c.stage), 'prod with CloudFront and WAF'].join(' | ') + ' |', `|---|${[...stages, model.edge].map(() => '---:').join('|')}|`);
  const rowOf = (label: string, f: (c: StageCounts) => string | number) => out.push(`| ${label} | ${[...stages, model.edge].map((c) => String(f(c))).join(' | ')} |`);
  rowOf('functions', (c) => c.functions);
  rowOf('alarms (metrics)', (c) => `${c.alarms} (${c.alarmMetrics})`);
  rowOf('NAT gateways / public IPv4', (c) => `${c.natGateways} / ${c.publicIps}`);
  rowOf('interface endpoint AZs', (c) => `${c.endpointAzs}${c.endpointServices.length ? ` (${c.endpointServices.join(', ')})` : ''}`);
  rowOf('KMS keys / secrets / dashboards', (c) => `${c.kmsKeys} / ${c.secrets} / ${c.dashboards}`);
  rowOf('WAF web ACLs (rules) / distributions', (c) => `${c.webAcls} (${c.wafRules}) / ${c.distributions}`);
  rowOf('scheduled invocations a month', (c) => Math.round(c.scheduledInvocations).toLocaleString('en-US'));
  rowOf('X-Ray sampling', (c) => `${c.trace.reservoirPerSecond}/s + ${(c.trace.fixedRate * 100).toFixed(0)} %${c.trace.fromTemplate ? '' : ' (default rule)'}`);
  rowOf('access log line (bytes) / log retention (months)', (c) => `${c.accessLogLineBytes} / ${c.logRetentionMonths.toFixed(0)}`);

  const allIn = prodAllIn(model, plain);
  const idle = idlePerMonth(model.counts.find((c) => c.stage === 'prod')!, { jobMemoryGb: model.jobMemoryGb });
  const met = (x: number, goal: number) => (x <= goal ? `**met** (${usd(x)} ≤ $${goal})` : `**not met** (${usd(x)} > $${goal})`);
  out.push(
    '',
    '### Against the goals',
    '',
    `- All-in per million checkouts on prod (plain flow): ${met(sum(allIn), GOALS.allInPerMillion)}. Largest: ${dominant(allIn)}.`,
    `- Idle prod a month: ${met(sum(idle), GOALS.idlePerMonthProd)}. Largest: ${dominant(idle)}.`,
    '',
    '### Assumptions',
    '',
    ...Object.entries(ASSUMPTIONS).map(([k, v]) => `- \`${k}\` = ${v.value}: ${v.why}.`),
    '- Lambda time is the handler time measured on this machine (in-process, local engine) plus the modelled gateway wait, billed at',
    '  the configured memory; cold starts are not counted. Reads and Secrets Manager calls are with warm caches: a long tail of',
    '  merchants, each seen less than once per cache lifetime per instance, adds up to one Secrets Manager call per request.',
    '- Not modelled: custom metrics from the functions\' metric lines ($0.30 a metric a month; a fixed set per function and',
    '  merchant dimension), Cognito (free for the few operators), free tiers, taxes, support plans.',
    '',
    `### List prices (us-east-1, as published on ${LIST_PRICES.asOf})`,
    '',
    ...Object.entries(LIST_PRICES).filter(([k]) => k !== 'asOf').map(([k, v]) => `- \`${k}\`: $${(v as { usd: number }).usd} (${(v as { source: string }).source})`),
  );
  return out;
}

export function spliceCostSection(report: string, section: readonly string[]): string {
  const block = [COST_SECTION_START, ...section, COST_SECTION_END].join('\n');
  const start = report.indexOf(COST_SECTION_START);
  const end = report.indexOf(COST_SECTION_END);
  if (start >= 0 && end > start) return `${report.slice(0, start)}${block}${report.slice(end + COST_SECTION_END.length)}`;
  return `${report.trimEnd()}\n\n${block}\n`;
}

export const COST_STAGES: readonly Stage[] = STAGES;

/** The model for the rows of a key-heat run: every stage synthesized and counted, and prod with the edge. */
export function buildCostModel(rows: readonly CostRow[], memory: { readonly payMemoryGb: number; readonly jobMemoryGb: number }): CostModel {
  return { rows, counts: COST_STAGES.map((stage) => stageCounts(stage)), edge: { ...stageCounts('prod', { edge: true }), stage: 'prod' }, ...memory };
}
