import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Stage } from '../naming';
import { routeKey, type RouteDefinition } from '../routes';
import type { CheckoutApi } from './checkout-api';
import { DEFAULT_TIMEOUT_SECONDS, type CheckoutFunction } from './checkout-function';
import type { CheckoutTable } from './checkout-table';
import { runbook, serviceMetric, type AlarmKind } from './monitoring-metrics';

/**
 * The limits the alarms hold the service to, each with its reason. One set for every stage: dev
 * and staging alarms prove the alarms work before prod depends on them.
 */
export const ALARM_LIMITS = {
  /** Share of a route's requests answered 5xx in five minutes; only with enough requests to mean something. */
  api5xxPercent: 5,
  api5xxMinRequests: 10,
  /** p99 latency per route: half the function's timeout, at most 3 s (the pages and the API answer in well under that). */
  apiP99MaxMs: 3000,
  /** Three five-minute periods in a row: one slow cold start must not page anyone. */
  apiP99Periods: 3,
  /** Unhandled errors (the error envelope answers every expected failure): a few in five minutes. */
  functionErrors: 3,
  /** Any throttle is a request or a tick refused for lack of concurrency. */
  functionThrottles: 1,
  /** DynamoDB throttle events (reads and writes) in five minutes, on the table or one index. */
  dynamodbThrottles: 5,
  /** The oldest due item of a job's queue: the jobs run every minute, a quarter of an hour means they are not keeping up. */
  backlogSeconds: 15 * 60,
  /** Callbacks reach merchants within seconds normally; p90 over five minutes is a delivery problem. */
  callbackLagMs: 5 * 60_000,
  /** Approval rate floor over fifteen minutes, with at least this many final answers (fewer say nothing). */
  approvalRatePercent: 50,
  approvalRateMinAttempts: 20,
} as const;

export interface MonitoringProps {
  readonly stage: Stage;
  /** Prefix of the alarm and dashboard names (`Checkout-dev`). */
  readonly name: string;
  readonly topic: sns.ITopic;
  readonly api: CheckoutApi;
  /** The deployed routes, with their functions by route id. */
  readonly routes: readonly RouteDefinition[];
  readonly routeFunctions: ReadonlyMap<string, CheckoutFunction>;
  /** The other functions (scheduled jobs, the stream dispatcher) by name. */
  readonly otherFunctions: ReadonlyMap<string, CheckoutFunction>;
  readonly jobsDeadLetterQueue: sqs.IQueue;
  readonly table: CheckoutTable;
  /** The merchants with their own approval-rate stream (METRIC_MERCHANTS), bounded. */
  readonly metricMerchants: readonly string[];
  /** A merchant's chargeback rate of a month at or over this (percent) alarms, once it has this many settled payments. */
  readonly chargebackRate: ChargebackRateRule;
}

/** When a merchant's chargeback rate alarms (lambdas/config.ts CHARGEBACK_RATE_*; context `chargebackRateAlarm`). */
export interface ChargebackRateRule {
  readonly alarmPercent: number;
  readonly minSettled: number;
}

export interface MonitoredAlarm {
  readonly kind: AlarmKind;
  /** What it watches: a route id, a function, an index, a job; empty for the service as a whole. */
  readonly target: string;
  readonly alarm: cloudwatch.Alarm;
}

const FIVE_MINUTES = Duration.minutes(5);

/**
 * The stage's alarms (each to the alarm topic, each with a runbook section in docs/operations.md)
 * and its dashboard: API 5xx rate and p99 latency per route (the stage's detailed metrics), errors
 * and throttles of every function, the jobs' dead-letter queue, DynamoDB throttles on the table and
 * each index, the jobs' backlog age, callback lag and the approval rate. The callback delivery
 * alarms live with the delivery (lib/constructs/callback-delivery.ts).
 */
export class Monitoring extends Construct {
  readonly alarms: readonly MonitoredAlarm[];
  readonly dashboard: cloudwatch.Dashboard;
  /** Known at synth (no output of the nested stack needed to name it). */
  readonly dashboardName: string;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.dashboardName = props.name;
    const { stage, api } = props;
    const alarms: MonitoredAlarm[] = [];
    const add = (kind: AlarmKind, target: string, description: string, options: Omit<cloudwatch.AlarmProps, 'alarmName' | 'alarmDescription'>) => {
      const alarm = new cloudwatch.Alarm(this, `${kind}${target}`, {
        alarmName: [props.name, kind, target].filter(Boolean).join('-'),
        alarmDescription: `${description} ${runbook(kind)}`,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        ...options,
      });
      alarm.addAlarmAction(new actions.SnsAction(props.topic));
      alarms.push({ kind, target, alarm });
      return alarm;
    };

    // API, per route: the stage has detailed (route-level) metrics on.
    const routeMetric = (route: RouteDefinition, metricName: string, statistic: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        dimensionsMap: { ApiId: api.httpApi.apiId, Stage: api.stage.stageName, Method: route.method, Resource: route.path },
        statistic,
        period: FIVE_MINUTES,
      });
    for (const route of props.routes) {
      const key = routeKey(route);
      add('Api5xxRate', route.id, `${key} answers 5xx to ${ALARM_LIMITS.api5xxPercent}% or more of its requests (at least ${ALARM_LIMITS.api5xxMinRequests} in five minutes).`, {
        metric: new cloudwatch.MathExpression({
          expression: `IF(requests >= ${ALARM_LIMITS.api5xxMinRequests}, 100 * errors / requests, 0)`,
          usingMetrics: { errors: routeMetric(route, '5xx', 'Sum'), requests: routeMetric(route, 'Count', 'SampleCount') },
          period: FIVE_MINUTES,
          label: `${key} 5xx %`,
        }),
        threshold: ALARM_LIMITS.api5xxPercent,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
      add('ApiLatencyP99', route.id, `${key} p99 latency at or over ${p99ThresholdMs(route)} ms for fifteen minutes.`, {
        metric: routeMetric(route, 'Latency', 'p99'),
        threshold: p99ThresholdMs(route),
        evaluationPeriods: ALARM_LIMITS.apiP99Periods,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }

    // Every function: unhandled errors and throttles.
    const functions = [...[...props.routeFunctions].map(([id, f]) => [id, f] as const), ...props.otherFunctions];
    for (const [name, fn] of functions) {
      add('FunctionErrors', name, `The ${name} function failed ${ALARM_LIMITS.functionErrors} or more times in five minutes (unhandled errors or timeouts).`, {
        metric: fn.function.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
        threshold: ALARM_LIMITS.functionErrors,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
      add('FunctionThrottles', name, `The ${name} function was throttled: invocations were refused for lack of concurrency.`, {
        metric: fn.function.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
        threshold: ALARM_LIMITS.functionThrottles,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }

    add('JobsDeadLetters', '', 'A scheduled job run failed, or a tick could not be delivered: it is in the jobs\' dead-letter queue.', {
      metric: props.jobsDeadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });

    // DynamoDB: throttle events on the table, and on each index (an index throttled holds back the table's writes).
    const tableName = props.table.table.tableName;
    const throttles = (index?: string) =>
      new cloudwatch.MathExpression({
        expression: 'reads + writes',
        usingMetrics: Object.fromEntries(
          (['Read', 'Write'] as const).map((kind) => [
            `${kind.toLowerCase()}s`,
            new cloudwatch.Metric({
              namespace: 'AWS/DynamoDB',
              metricName: `${kind}ThrottleEvents`,
              dimensionsMap: { TableName: tableName, ...(index ? { GlobalSecondaryIndexName: index } : {}) },
              statistic: 'Sum',
              period: FIVE_MINUTES,
            }),
          ]),
        ),
        period: FIVE_MINUTES,
        label: index ? `${index} throttle events` : 'table throttle events',
      });
    add('TableThrottles', '', `DynamoDB throttled ${ALARM_LIMITS.dynamodbThrottles} or more requests on the table in five minutes.`, {
      metric: throttles(),
      threshold: ALARM_LIMITS.dynamodbThrottles,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    for (const index of props.table.indexNames) {
      add('IndexThrottles', index, `DynamoDB throttled ${ALARM_LIMITS.dynamodbThrottles} or more requests on the ${index} index in five minutes.`, {
        metric: throttles(index),
        threshold: ALARM_LIMITS.dynamodbThrottles,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }

    // The jobs' queues: each run reports its oldest due item; no report for ten minutes is as bad.
    const backlogs = [
      ['Capture', 'BacklogOldestAgeCapture'],
      ['Reconcile', 'BacklogOldestAgeReconcile'],
      ['Delivery', 'BacklogOldestAgeDelivery'],
    ] as const;
    for (const [job, metricName] of backlogs) {
      add('JobBacklog', job, `The ${job.toLowerCase()} queue's oldest due item has waited ${ALARM_LIMITS.backlogSeconds / 60} minutes or more, or the job has reported nothing for ten minutes.`, {
        metric: serviceMetric(stage, metricName, { statistic: 'Maximum' }),
        threshold: ALARM_LIMITS.backlogSeconds,
        evaluationPeriods: 2,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      });
    }

    add('CallbackLag', '', `Callbacks reach merchants ${ALARM_LIMITS.callbackLagMs / 60_000} minutes or more after their transaction (p90, two periods of five minutes).`, {
      metric: serviceMetric(stage, 'CallbackDeliveryLag', { statistic: 'p90' }),
      threshold: ALARM_LIMITS.callbackLagMs,
      evaluationPeriods: 2,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });

    const approvalRate = (merchant?: string) => {
      const window = Duration.minutes(15);
      return new cloudwatch.MathExpression({
        expression: `IF(answers >= ${ALARM_LIMITS.approvalRateMinAttempts}, rate, 100)`,
        usingMetrics: {
          rate: serviceMetric(stage, 'ApprovalRate', { statistic: 'Average', period: window, merchant }),
          answers: serviceMetric(stage, 'ApprovalRate', { statistic: 'SampleCount', period: window, merchant }),
        },
        period: window,
        label: merchant ? `approval rate ${merchant}` : 'approval rate',
      });
    };
    const approvalOptions = (metric: cloudwatch.IMetric) => ({
      metric,
      threshold: ALARM_LIMITS.approvalRatePercent,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
    });
    add('ApprovalRateDrop', '', `Fewer than ${ALARM_LIMITS.approvalRatePercent}% of payment attempts were approved in fifteen minutes (of at least ${ALARM_LIMITS.approvalRateMinAttempts}).`, approvalOptions(approvalRate()));
    for (const merchant of props.metricMerchants) {
      add('MerchantApprovalRateDrop', merchant, `Fewer than ${ALARM_LIMITS.approvalRatePercent}% of merchant ${merchant}'s payment attempts were approved in fifteen minutes (of at least ${ALARM_LIMITS.approvalRateMinAttempts}).`, approvalOptions(approvalRate(merchant)));
    }
    // The hourly job (lib/jobs.ts CheckChargebackRates) emits the highest rate of this month among
    // the merchants with enough settled payments; two hours running without one at or over says nothing.
    const { alarmPercent, minSettled } = props.chargebackRate;
    add('ChargebackRate', '', `A merchant's chargeback rate this month is ${alarmPercent}% or more (chargebacks over payments settled, with at least ${minSettled} settled).`, {
      metric: serviceMetric(stage, 'ChargebackRateHighest', { statistic: 'Maximum', period: Duration.hours(1) }),
      threshold: alarmPercent,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    this.alarms = alarms;

    this.dashboard = this.buildDashboard(props, functions);
  }

  private buildDashboard(props: MonitoringProps, functions: readonly (readonly [string, CheckoutFunction])[]): cloudwatch.Dashboard {
    const { stage, api } = props;
    const stageMetric = (metricName: string, statistic: string, label: string) =>
      new cloudwatch.Metric({ namespace: 'AWS/ApiGateway', metricName, dimensionsMap: { ApiId: api.httpApi.apiId, Stage: api.stage.stageName }, statistic, period: Duration.minutes(1), label });
    const sum = (name: Parameters<typeof serviceMetric>[1]) => serviceMetric(stage, name, { statistic: 'Sum', period: Duration.minutes(1), label: name });
    const graph = (title: string, left: cloudwatch.IMetric[], width = 12, right: cloudwatch.IMetric[] = []) => new cloudwatch.GraphWidget({ title, left, right, width, height: 6 });
    const routeLatency = (route: RouteDefinition) =>
      new cloudwatch.Metric({
        namespace: 'AWS/ApiGateway',
        metricName: 'Latency',
        dimensionsMap: { ApiId: api.httpApi.apiId, Stage: api.stage.stageName, Method: route.method, Resource: route.path },
        statistic: 'p99',
        period: FIVE_MINUTES,
        label: routeKey(route),
      });
    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: props.name, defaultInterval: Duration.hours(3) });
    dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `# Hosted checkout (${stage})\nAlarms notify the stack's alarm topic; each has a runbook in docs/operations.md ("Alarm: …").`,
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(
      graph('Traffic: requests', [stageMetric('Count', 'SampleCount', 'requests')], 8),
      graph('Traffic: checkouts', [sum('SessionsCreated'), sum('PageViews')], 8),
      graph('Payments by outcome', [sum('PaymentsApproved'), sum('PaymentsDeclined'), sum('Payments3DSecure'), sum('PaymentsAbandoned')], 8),
    );
    dashboard.addWidgets(
      graph('Latency (API, all routes)', [stageMetric('Latency', 'p50', 'p50'), stageMetric('Latency', 'p99', 'p99')], 8),
      graph('p99 latency per route', props.routes.map(routeLatency), 16),
    );
    dashboard.addWidgets(
      graph('Errors: API answers', [stageMetric('4xx', 'Sum', '4xx'), stageMetric('5xx', 'Sum', '5xx')], 8),
      graph('Errors: function errors', functions.map(([name, fn]) => fn.function.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum', label: name })), 8),
      graph('Throttles: functions', functions.map(([name, fn]) => fn.function.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum', label: name })), 8),
    );
    dashboard.addWidgets(
      graph('Approval rate (%)', [
        serviceMetric(stage, 'ApprovalRate', { statistic: 'Average', period: Duration.minutes(15), label: 'all merchants' }),
        ...props.metricMerchants.map((merchant) => serviceMetric(stage, 'ApprovalRate', { statistic: 'Average', period: Duration.minutes(15), label: merchant, merchant })),
      ]),
      graph('Captures, voids, refunds; reconciled approvals', [
        sum('CapturesApproved'),
        sum('CapturesDeclined'),
        sum('VoidsApproved'),
        sum('VoidsDeclined'),
        sum('RefundsApproved'),
        sum('RefundsDeclined'),
        sum('ReconciledApprovals'),
      ]),
    );
    dashboard.addWidgets(
      graph('Backlog: oldest due item (s)', [
        serviceMetric(stage, 'BacklogOldestAgeCapture', { statistic: 'Maximum', period: Duration.minutes(1), label: 'capture' }),
        serviceMetric(stage, 'BacklogOldestAgeReconcile', { statistic: 'Maximum', period: Duration.minutes(1), label: 'reconcile' }),
        serviceMetric(stage, 'BacklogOldestAgeDelivery', { statistic: 'Maximum', period: Duration.minutes(1), label: 'delivery' }),
      ]),
      graph('Callbacks', [sum('CallbacksDelivered'), sum('DeadCallbacks')], 12, [
        serviceMetric(stage, 'CallbackDeliveryLag', { statistic: 'p90', period: FIVE_MINUTES, label: 'lag p90 (ms)' }),
      ]),
    );
    // The service-wide alarms (a status widget holds at most 100; the per-route and per-function ones are in the graphs above).
    const perTarget: readonly AlarmKind[] = ['Api5xxRate', 'ApiLatencyP99', 'FunctionErrors', 'FunctionThrottles'];
    dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms.filter((a) => !perTarget.includes(a.kind)).map((a) => a.alarm), width: 24, height: 4 }));
    return dashboard;
  }
}

/** Half the route's timeout, at most ALARM_LIMITS.apiP99MaxMs. */
export function p99ThresholdMs(route: Pick<RouteDefinition, 'timeoutSeconds'>): number {
  return Math.min(ALARM_LIMITS.apiP99MaxMs, ((route.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000) / 2);
}
