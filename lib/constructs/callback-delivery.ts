import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CALLBACK_DISPATCHER } from '../jobs';
import type { AlarmTopic } from './alarm-topic';
import { CheckoutFunction, type FunctionSettings } from './checkout-function';
import { alarmMaker, runbook, serviceMetric } from './monitoring-metrics';

export interface CallbackDeliveryProps {
  readonly settings: FunctionSettings;
  /** The scheduled outbox relay (lib/jobs.ts DeliverCallbacks). */
  readonly relay: CheckoutFunction;
  readonly removalPolicy: RemovalPolicy;
  /** Where the alarms go (lib/constructs/alarm-topic.ts). */
  readonly alarms: AlarmTopic;
  /** Where the alarms are made: the stage's observability nested stack, apart from the main stack's resource budget. */
  readonly alarmScope: Construct;
}

/** Stream records a failing batch is retried with before it goes to the dead-letter queue. */
export const STREAM_RETRY_ATTEMPTS = 3;
/** Older stream records are not worth the fast path: the relay has delivered them by then. */
export const STREAM_MAX_RECORD_AGE = Duration.minutes(15);
export const DISPATCH_TIMEOUT_SECONDS = 60;
export { METRIC_NAMESPACE } from './monitoring-metrics';

/**
 * How callbacks leave the outbox in the cloud. The outbox itself is on the payment items (every
 * write that appends a transaction puts the payment in the `sending` index), so nothing here is
 * needed for a callback not to be lost; this is about speed and visibility:
 * - the table's stream triggers a dispatcher that delivers new callbacks within seconds (EventBridge
 *   rules fire at most every minute); batches it cannot process go to a dead-letter queue, and the
 *   scheduled relay delivers those payments anyway;
 * - alarms: stream records dead-lettered, the stream falling behind, callbacks given up on (the
 *   `DeadCallbacks` metric the delivery code emits), and the relay failing. They notify the stage's
 *   alarm topic; lib/constructs/monitoring.ts has the others.
 */
export class CallbackDelivery extends Construct {
  readonly dispatcher: CheckoutFunction;
  readonly deadLetterQueue: sqs.Queue;
  readonly alarmTopic: sns.Topic;
  readonly alarmKey: kms.Key;
  readonly alarms: readonly cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, props: CallbackDeliveryProps) {
    super(scope, id);
    const table = props.settings.table.table;

    this.deadLetterQueue = new sqs.Queue(this, 'StreamDeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself a dead-letter queue: the stream event source sends the batches the dispatcher ' +
        'could not process to it (on-failure destination). Their callbacks stay in the outbox either way.',
    });

    this.dispatcher = new CheckoutFunction(this, 'Dispatcher', {
      settings: props.settings,
      purpose: 'Callback dispatcher: delivers new callbacks from the table stream',
      entry: CALLBACK_DISPATCHER.entry,
      access: CALLBACK_DISPATCHER.access,
      timeoutSeconds: DISPATCH_TIMEOUT_SECONDS,
    });
    this.dispatcher.function.addEventSource(
      new sources.DynamoEventSource(table, {
        startingPosition: lambda.StartingPosition.LATEST,
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(1),
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        retryAttempts: STREAM_RETRY_ATTEMPTS,
        maxRecordAge: STREAM_MAX_RECORD_AGE,
        parallelizationFactor: 2,
        onFailure: new sources.SqsDlq(this.deadLetterQueue),
        // Payment items in the outbox only; the handler then keeps the writes that added work. And
        // payment items DynamoDB's TTL removed (links that expired unpaid): their details go too.
        filters: [
          lambda.FilterCriteria.filter({
            dynamodb: { Keys: { sk: { S: lambda.FilterRule.isEqual('PAYMENT') } }, NewImage: { sendPk: { S: lambda.FilterRule.exists() } } },
          }),
          lambda.FilterCriteria.filter({
            eventName: lambda.FilterRule.isEqual('REMOVE'),
            userIdentity: { type: lambda.FilterRule.isEqual('Service'), principalId: lambda.FilterRule.isEqual('dynamodb.amazonaws.com') },
            dynamodb: { Keys: { sk: { S: lambda.FilterRule.isEqual('PAYMENT') } } },
          }),
        ],
      }),
    );

    this.alarmKey = props.alarms.key;
    this.alarmTopic = props.alarms.topic;

    // Emitted by the delivery code itself (lambdas/observability/telemetry.ts), wherever it runs.
    const deadCallbacks = serviceMetric(props.settings.stage, 'DeadCallbacks', { statistic: 'Sum', period: Duration.minutes(5) });

    const alarmScope = new Construct(props.alarmScope, 'CallbackAlarms');
    const alarm = alarmMaker(alarmScope, this.alarmTopic);
    this.alarms = [
      alarm('DeadCallbacksAlarm', `Callbacks were given up on after 24 hours of retries. ${runbook('DeadCallbacks')}`, deadCallbacks, 1),
      alarm(
        'StreamDeadLettersAlarm',
        `Stream batches the callback dispatcher could not process; the relay delivers their callbacks, but the dispatcher is failing. ${runbook('StreamDeadLetters')}`,
        this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
        1,
      ),
      alarm(
        'StreamIteratorAgeAlarm',
        `The callback dispatcher is falling behind the table stream. ${runbook('StreamIteratorAge')}`,
        this.dispatcher.function.metric('IteratorAge', { period: Duration.minutes(5), statistic: 'Maximum' }),
        5 * 60_000,
        2,
      ),
      alarm('RelayErrorsAlarm', `The scheduled callback relay keeps failing: due callbacks are not being delivered. ${runbook('RelayErrors')}`, props.relay.function.metricErrors({ period: Duration.minutes(5) }), 3, 2),
    ];
  }
}
