import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { MERCHANT_DIMENSION, METRIC_NAMESPACE, SERVICE_NAME, type MetricName } from '../../lambdas/observability/metric-names';
import type { Stage } from '../naming';

export { METRIC_NAMESPACE };

/**
 * Every kind of alarm the stack creates. Each has a runbook section in docs/operations.md headed
 * `### Alarm: <kind>` (anchor `#alarm-<kind in lower case>`), which its description points to.
 */
export const ALARM_KINDS = [
  'Api5xxRate',
  'ApiLatencyP99',
  'FunctionErrors',
  'FunctionThrottles',
  'JobsDeadLetters',
  'TableThrottles',
  'IndexThrottles',
  'JobBacklog',
  'CallbackLag',
  'ApprovalRateDrop',
  'MerchantApprovalRateDrop',
  'ChargebackRate',
  'DeadCallbacks',
  'StreamDeadLetters',
  'StreamIteratorAge',
  'RelayErrors',
  'ReceiptsFailed',
  'MailReputation',
] as const;
export type AlarmKind = (typeof ALARM_KINDS)[number];

export const runbookAnchor = (kind: AlarmKind): string => `alarm-${kind.toLowerCase()}`;
/** The end of every alarm description: where its runbook is. */
export const runbook = (kind: AlarmKind): string => `Runbook: docs/operations.md#${runbookAnchor(kind)}`;

/** One of the service's own metrics (EMF, lambdas/observability/telemetry.ts) for a stage. */
export function serviceMetric(stage: Stage, name: MetricName, options: { statistic: string; period?: Duration; label?: string; merchant?: string }): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRIC_NAMESPACE,
    metricName: name,
    dimensionsMap: { service: SERVICE_NAME, stage, ...(options.merchant !== undefined ? { [MERCHANT_DIMENSION]: options.merchant } : {}) },
    statistic: options.statistic,
    period: options.period ?? Duration.minutes(5),
    ...(options.label ? { label: options.label } : {}),
  });
}

/**
 * The alarms a construct makes beside its resources (the callbacks', the receipts'): each one
 * at or over its threshold, in `scope` (the observability nested stack), notifying `topic`.
 */
export function alarmMaker(scope: Construct, topic: sns.ITopic) {
  return (alarmId: string, description: string, metric: cloudwatch.IMetric, threshold: number, evaluationPeriods = 1, treatMissingData = cloudwatch.TreatMissingData.NOT_BREACHING): cloudwatch.Alarm => {
    const alarm = new cloudwatch.Alarm(scope, alarmId, {
      alarmDescription: description,
      metric,
      threshold,
      evaluationPeriods,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData,
    });
    alarm.addAlarmAction(new actions.SnsAction(topic));
    return alarm;
  };
}
