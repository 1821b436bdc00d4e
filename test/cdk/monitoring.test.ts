import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { chargebackRateFromContext, DEFAULT_CHARGEBACK_RATE, metricMerchantsFromContext, STAGE_SETTINGS } from '../../lib/checkout-stack';
import { ALARM_LIMITS, p99ThresholdMs } from '../../lib/constructs/monitoring';
import { ALARM_KINDS, runbookAnchor, type AlarmKind } from '../../lib/constructs/monitoring-metrics';
import { JOBS } from '../../lib/jobs';
import { stackName, STAGES, type Stage } from '../../lib/naming';
import { FALLBACK_ROUTE, routeKey } from '../../lib/routes';
import { TABLE_SCHEMA } from '../../lib/table-schema';
import { logicalId, resource, resourcesOfType, stageRoutes, synthesize, testApp, type Resource, type Synthesized } from './synth';

/**
 * The alarms and the dashboard (lib/constructs/monitoring.ts): one assertion per kind of alarm on
 * what it watches, its limit and where it goes; every alarm has its runbook in docs/operations.md.
 */
const OPERATIONS = readFileSync(join(__dirname, '../../docs/operations.md'), 'utf8');
/** GitHub's anchor of a heading: lower case, spaces to dashes, punctuation dropped. */
const anchors = new Set([...OPERATIONS.matchAll(/^#{2,4} (.+)$/gm)].map((m) => m[1]!.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));

describe.each(STAGES)('monitoring (%s)', (stage: Stage) => {
  let s: Synthesized;
  let alarms: Record<string, Resource>;
  beforeAll(() => {
    s = synthesize(stage);
    alarms = resourcesOfType(s.monitoring, 'AWS::CloudWatch::Alarm');
  });
  const byName = (name: string): Resource => {
    const found = Object.values(alarms).find((a) => a.Properties.AlarmName === `${stackName(stage)}-${name}`);
    if (!found) throw new Error(`no alarm ${name}`);
    return found;
  };
  const topicRef = () => ({ Ref: logicalId(s.stack.alarmTopic.topic) });
  const metricsOf = (a: Resource) => a.Properties.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string; Namespace: string; Dimensions: { Name: string; Value: unknown }[] }; Stat: string; Period: number } }[];

  test('every alarm notifies the one alarm topic and ends its description with a runbook in docs/operations.md', () => {
    expect(Object.keys(alarms).length).toBeGreaterThan(100);
    for (const a of Object.values(alarms)) {
      expect(a.Properties.AlarmActions).toEqual([topicRef()]);
      const anchor = /Runbook: docs\/operations\.md#([a-z0-9-]+)$/.exec(a.Properties.AlarmDescription as string)?.[1];
      expect(anchor && anchors.has(anchor) ? 'has runbook' : `${a.Properties.AlarmName ?? a.Properties.AlarmDescription}: no runbook`).toBe('has runbook');
    }
  });

  test.each(ALARM_KINDS.map((k) => [k]))('the %s alarm kind has its runbook section', (kind: AlarmKind) => {
    expect(anchors).toContain(runbookAnchor(kind));
  });

  test('Api5xxRate: per deployed route, the share of 5xx among at least 10 requests, from the stage\'s route metrics', () => {
    const routes = stageRoutes(stage);
    for (const route of routes) {
      const a = byName(`Api5xxRate-${route.id}`);
      expect(a.Properties).toMatchObject({ Threshold: ALARM_LIMITS.api5xxPercent, EvaluationPeriods: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching' });
      const metrics = metricsOf(a);
      expect(metrics.find((m) => m.Expression)?.Expression).toBe(`IF(requests >= ${ALARM_LIMITS.api5xxMinRequests}, 100 * errors / requests, 0)`);
      const errors = metrics.find((m) => m.Id === 'errors')!.MetricStat!;
      expect(errors.Metric.Namespace).toBe('AWS/ApiGateway');
      expect(errors.Metric.MetricName).toBe('5xx');
      expect(errors.Metric.Dimensions).toEqual(
        expect.arrayContaining([
          { Name: 'ApiId', Value: { Ref: logicalId(s.stack.api.httpApi) } },
          { Name: 'Stage', Value: '$default' },
          { Name: 'Method', Value: route.method },
          { Name: 'Resource', Value: route.path },
        ]),
      );
      expect(metrics.find((m) => m.Id === 'requests')!.MetricStat!.Metric.MetricName).toBe('Count');
    }
    expect(Object.values(alarms).filter((a) => String(a.Properties.AlarmName).includes('-Api5xxRate-'))).toHaveLength(routes.length);
  });

  test('ApiLatencyP99: per deployed route, p99 of the route\'s latency over three periods, at half its timeout (at most 3 s)', () => {
    for (const route of stageRoutes(stage)) {
      const a = byName(`ApiLatencyP99-${route.id}`);
      expect(a.Properties).toMatchObject({ MetricName: 'Latency', Namespace: 'AWS/ApiGateway', ExtendedStatistic: 'p99', Threshold: p99ThresholdMs(route), EvaluationPeriods: 3 });
      expect(a.Properties.Dimensions).toEqual(expect.arrayContaining([{ Name: 'Resource', Value: route.path }, { Name: 'Method', Value: route.method }]));
    }
    expect(p99ThresholdMs({ timeoutSeconds: 29 })).toBe(3000);
    expect(p99ThresholdMs({ timeoutSeconds: 4 })).toBe(2000);
  });

  test('FunctionErrors and FunctionThrottles: one of each for every function (routes, the $default route\'s, jobs, the stream dispatcher)', () => {
    const functions = [
      ...[...s.stack.functions].map(([id, f]) => [id, f] as const),
      [FALLBACK_ROUTE.id, s.stack.fallbackFunction] as const,
      ...[...s.stack.jobFunctions],
      ['CallbackDispatcher', s.stack.callbackDelivery!.dispatcher] as const,
    ];
    expect(functions).toHaveLength(stageRoutes(stage).length + JOBS.length + 2);
    for (const [name, fn] of functions) {
      const dims = [{ Name: 'FunctionName', Value: { Ref: logicalId(fn.function) } }];
      expect(byName(`FunctionErrors-${name}`).Properties).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Errors', Statistic: 'Sum', Threshold: ALARM_LIMITS.functionErrors, Dimensions: dims });
      expect(byName(`FunctionThrottles-${name}`).Properties).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Throttles', Statistic: 'Sum', Threshold: 1, Dimensions: dims });
    }
  });

  test('JobsDeadLetters: any message in the scheduled jobs\' dead-letter queue', () => {
    expect(byName('JobsDeadLetters').Properties).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Statistic: 'Maximum',
      Threshold: 1,
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(s.stack.jobs.deadLetterQueue), 'QueueName'] } }],
    });
  });

  test('TableThrottles and IndexThrottles: read and write throttle events on the table and on each of its indexes', () => {
    const tableRef = { Ref: logicalId(s.stack.table.table) };
    const check = (a: Resource, index?: string) => {
      const metrics = metricsOf(a);
      expect(metrics.find((m) => m.Expression)?.Expression).toBe('reads + writes');
      const stats = metrics.filter((m) => m.MetricStat).map((m) => m.MetricStat!);
      expect(stats.map((st) => st.Metric.MetricName).sort()).toEqual(['ReadThrottleEvents', 'WriteThrottleEvents']);
      for (const st of stats) {
        expect(st.Metric.Namespace).toBe('AWS/DynamoDB');
        expect(st.Metric.Dimensions).toEqual(expect.arrayContaining([{ Name: 'TableName', Value: tableRef }, ...(index ? [{ Name: 'GlobalSecondaryIndexName', Value: index }] : [])]));
        expect(st.Metric.Dimensions).toHaveLength(index ? 2 : 1);
      }
      expect(a.Properties.Threshold).toBe(ALARM_LIMITS.dynamodbThrottles);
    };
    check(byName('TableThrottles'));
    const indexes = TABLE_SCHEMA.globalSecondaryIndexes.map((i) => i.indexName);
    expect([...s.stack.table.indexNames].sort()).toEqual([...indexes].sort());
    for (const index of indexes) check(byName(`IndexThrottles-${index}`), index);
  });

  test('JobBacklog: the oldest due item of each job\'s queue (EMF), alarming also when a job reports nothing', () => {
    for (const [job, metric] of [['Capture', 'BacklogOldestAgeCapture'], ['Reconcile', 'BacklogOldestAgeReconcile'], ['Delivery', 'BacklogOldestAgeDelivery']]) {
      expect(byName(`JobBacklog-${job}`).Properties).toMatchObject({
        Namespace: 'Checkout',
        MetricName: metric,
        Statistic: 'Maximum',
        Threshold: ALARM_LIMITS.backlogSeconds,
        EvaluationPeriods: 2,
        TreatMissingData: 'breaching',
        Dimensions: [
          { Name: 'service', Value: 'checkout' },
          { Name: 'stage', Value: stage },
        ],
      });
    }
  });

  test('CallbackLag: p90 of the delivery lag over two periods', () => {
    expect(byName('CallbackLag').Properties).toMatchObject({ Namespace: 'Checkout', MetricName: 'CallbackDeliveryLag', ExtendedStatistic: 'p90', Threshold: ALARM_LIMITS.callbackLagMs, EvaluationPeriods: 2 });
  });

  test('ApprovalRateDrop: the average approval rate under the floor, only with enough answers', () => {
    const a = byName('ApprovalRateDrop');
    expect(a.Properties).toMatchObject({ Threshold: ALARM_LIMITS.approvalRatePercent, ComparisonOperator: 'LessThanThreshold' });
    const metrics = metricsOf(a);
    expect(metrics.find((m) => m.Expression)?.Expression).toBe(`IF(answers >= ${ALARM_LIMITS.approvalRateMinAttempts}, rate, 100)`);
    expect(metrics.find((m) => m.Id === 'rate')!.MetricStat).toMatchObject({ Stat: 'Average', Period: 900, Metric: { MetricName: 'ApprovalRate', Dimensions: [{ Name: 'service', Value: 'checkout' }, { Name: 'stage', Value: stage }] } });
    expect(metrics.find((m) => m.Id === 'answers')!.MetricStat).toMatchObject({ Stat: 'SampleCount' });
    // No merchant is named in cdk.json: no per-merchant alarm.
    expect(Object.values(alarms).filter((x) => String(x.Properties.AlarmName).includes('MerchantApprovalRateDrop'))).toHaveLength(0);
  });

  test('ChargebackRate: the highest merchant chargeback rate of the month, hourly, at or over 0.9 % by default; the job that emits it runs hourly', () => {
    const a = byName('ChargebackRate');
    expect(a.Properties).toMatchObject({
      Namespace: 'Checkout',
      MetricName: 'ChargebackRateHighest',
      Dimensions: [{ Name: 'service', Value: 'checkout' }, { Name: 'stage', Value: stage }],
      Statistic: 'Maximum',
      Period: 3600,
      Threshold: DEFAULT_CHARGEBACK_RATE.alarmPercent,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(DEFAULT_CHARGEBACK_RATE).toEqual({ alarmPercent: 0.9, minSettled: 100 });
    expect(String(a.Properties.AlarmDescription)).toContain('0.9% or more');
    const job = resource(s.template, logicalId(s.stack.jobFunctions.get('CheckChargebackRates')!.function));
    expect(job.Properties.Environment.Variables).toMatchObject({ CHARGEBACK_RATE_ALARM_PERCENT: '0.9', CHARGEBACK_RATE_MIN_SETTLED: '100' });
    const rules = Object.values(resourcesOfType(s.template, 'AWS::Events::Rule')).filter((r) => JSON.stringify(r.Properties.Targets).includes(logicalId(s.stack.jobFunctions.get('CheckChargebackRates')!.function)));
    expect(rules.map((r) => r.Properties.ScheduleExpression)).toEqual(['rate(1 hour)']);
  });

  test('the dashboard shows traffic, latency, errors, approval rate, backlog and callbacks', () => {
    const dashboards = resourcesOfType(s.monitoring, 'AWS::CloudWatch::Dashboard');
    expect(Object.keys(dashboards)).toEqual([logicalId(s.stack.monitoring.dashboard)]);
    const dashboard = Object.values(dashboards)[0]!;
    expect(dashboard.Properties.DashboardName).toBe(stackName(stage));
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const title of ['Traffic: requests', 'Traffic: checkouts', 'Payments by outcome', 'Latency (API, all routes)', 'p99 latency per route', 'Errors: API answers', 'Errors: function errors', 'Approval rate (%)', 'Backlog: oldest due item (s)', 'Callbacks', 'Alarms']) {
      expect(body).toContain(`\\"title\\":\\"${title}\\"`);
    }
    for (const metric of ['SessionsCreated', 'PageViews', 'PaymentsApproved', 'ApprovalRate', 'BacklogOldestAgeDelivery', 'CallbackDeliveryLag', 'DeadCallbacks']) expect(body).toContain(metric);
    for (const route of stageRoutes(stage)) expect(body).toContain(routeKey(route));
  });

  test('functions log JSON at the stage\'s level into groups kept the stage\'s time; the API has route metrics', () => {
    const settings = STAGE_SETTINGS[stage];
    s.template.allResourcesProperties('AWS::Lambda::Function', { LoggingConfig: Match.objectLike({ LogFormat: 'JSON', ApplicationLogLevel: settings.logLevel }), TracingConfig: { Mode: 'Active' } });
    s.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: settings.logRetention });
    expect(resource(s.template, logicalId(s.stack.api.stage)).Properties.DefaultRouteSettings).toMatchObject({ DetailedMetricsEnabled: true });
  });
});

describe('the chargeback-rate alarm\'s threshold', () => {
  test('context chargebackRateAlarm sets the alarm\'s threshold and the functions\' values, per stage or for every stage', () => {
    const { template, stack, monitoring } = synthesize('prod', { context: { chargebackRateAlarm: { prod: { percent: 1.5, minSettled: 250 } } } });
    const alarm = Object.values(resourcesOfType(monitoring, 'AWS::CloudWatch::Alarm')).find((a) => a.Properties.AlarmName === 'Checkout-prod-ChargebackRate')!;
    expect(alarm.Properties.Threshold).toBe(1.5);
    const fn = resource(template, logicalId(stack.functions.get('AdminDisputes')!.function));
    expect(fn.Properties.Environment.Variables).toMatchObject({ CHARGEBACK_RATE_ALARM_PERCENT: '1.5', CHARGEBACK_RATE_MIN_SETTLED: '250' });
  });

  test.each([
    [undefined, 'prod', { alarmPercent: 0.9, minSettled: 100 }],
    [{ percent: 2 }, 'dev', { alarmPercent: 2, minSettled: 100 }],
    [{ dev: { minSettled: '10' } }, 'dev', { alarmPercent: 0.9, minSettled: 10 }],
    [{ dev: { minSettled: 10 } }, 'prod', { alarmPercent: 0.9, minSettled: 100 }],
    ['{"percent":"1.2"}', 'staging', { alarmPercent: 1.2, minSettled: 100 }],
  ] as const)('%j for %s is %j', (value, stage, expected) => {
    expect(chargebackRateFromContext(testApp({ context: value === undefined ? {} : { chargebackRateAlarm: value } }).node, stage)).toEqual(expected);
  });

  test.each([[{ percent: 0 }], [{ percent: 101 }], [{ percent: 'high' }], [{ minSettled: 1.5 }], [{ minSettled: -1 }], [[1]], ['0.9']])('%j is refused at synth', (value) => {
    expect(() => chargebackRateFromContext(testApp({ context: { chargebackRateAlarm: value } }).node, 'prod')).toThrow(/chargebackRateAlarm/);
  });
});

describe('merchants with their own approval-rate stream', () => {
  test('context metricMerchants (per stage or for all) gives each named merchant a metric stream and an alarm', () => {
    const { template, stack, monitoring } = synthesize('prod', { context: { metricMerchants: { prod: ['big-shop', 'other-shop'] } } });
    const alarms = Object.values(resourcesOfType(monitoring, 'AWS::CloudWatch::Alarm')).filter((a) => String(a.Properties.AlarmName).includes('MerchantApprovalRateDrop'));
    expect(alarms.map((a) => a.Properties.AlarmName).sort()).toEqual(['Checkout-prod-MerchantApprovalRateDrop-big-shop', 'Checkout-prod-MerchantApprovalRateDrop-other-shop']);
    const rate = (alarms[0]!.Properties.Metrics as { Id: string; MetricStat?: { Metric: { Dimensions: unknown[] } } }[]).find((m) => m.Id === 'rate')!;
    expect(rate.MetricStat!.Metric.Dimensions).toContainEqual({ Name: 'merchant', Value: expect.stringMatching(/-shop$/) });
    const fn = resource(template, logicalId(stack.functions.get('CreateSession')!.function));
    expect(fn.Properties.Environment.Variables.METRIC_MERCHANTS).toBe('big-shop,other-shop');
  });

  test.each([
    [{ dev: ['a'] }, 'dev', ['a']],
    [{ dev: ['a'] }, 'prod', []],
    ['a, b,,a', 'staging', ['a', 'b']],
    [['x-1'], 'prod', ['x-1']],
    [undefined, 'prod', []],
  ] as const)('%j for %s names %j', (value, stage, expected) => {
    expect(metricMerchantsFromContext(testApp({ context: value === undefined ? {} : { metricMerchants: value } }).node, stage)).toEqual(expected);
  });

  test('more than ten merchants, or something that is not a merchant key, is refused at synth', () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `m${i}`);
    expect(() => metricMerchantsFromContext(testApp({ context: { metricMerchants: eleven } }).node, 'prod')).toThrow(/names 11 merchants; at most 10/);
    expect(() => metricMerchantsFromContext(testApp({ context: { metricMerchants: ['bad key!'] } }).node, 'prod')).toThrow(/must list merchant keys/);
  });
});
