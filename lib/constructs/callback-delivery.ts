import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sources from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CALLBACK_DISPATCHER } from '../jobs';
import { CheckoutFunction, type FunctionSettings } from './checkout-function';

export interface CallbackDeliveryProps {
  readonly settings: FunctionSettings;
  /** The scheduled outbox relay (lib/jobs.ts DeliverCallbacks): its log reports dead callbacks. */
  readonly relay: CheckoutFunction;
  readonly removalPolicy: RemovalPolicy;
}

/** Stream records a failing batch is retried with before it goes to the dead-letter queue. */
export const STREAM_RETRY_ATTEMPTS = 3;
/** Older stream records are not worth the fast path: the relay has delivered them by then. */
export const STREAM_MAX_RECORD_AGE = Duration.minutes(15);
export const DISPATCH_TIMEOUT_SECONDS = 60;
/** The log message the relay and the dispatcher write when callbacks die (lambdas/handlers/callback-job.ts). */
export const DEAD_CALLBACK_MESSAGE = 'callback dead';
export const METRIC_NAMESPACE = 'Checkout';

/**
 * How callbacks leave the outbox in the cloud. The outbox itself is on the payment items (every
 * write that appends a transaction puts the payment in the `sending` index), so nothing here is
 * needed for a callback not to be lost; this is about speed and visibility:
 * - the table's stream triggers a dispatcher that delivers new callbacks within seconds (EventBridge
 *   rules fire at most every minute); batches it cannot process go to a dead-letter queue, and the
 *   scheduled relay delivers those payments anyway;
 * - alarms: stream records dead-lettered, the stream falling behind, callbacks given up on, and
 *   the relay failing. They notify one SNS topic the platform team subscribes to.
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

    // CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key (its policy
    // cannot be changed to let CloudWatch use it): alarms would fire into nothing. Hence a key of
    // our own, which CloudWatch may use for this.
    this.alarmKey = new kms.Key(this, 'AlarmTopicKey', {
      description: 'Encrypts the callback delivery alarm topic',
      enableKeyRotation: true,
      removalPolicy: props.removalPolicy,
    });
    this.alarmKey.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );
    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', {
      displayName: 'Checkout callback delivery alarms',
      enforceSSL: true,
      masterKey: this.alarmKey,
    });

    const deadCallbacks = new cloudwatch.Metric({ namespace: METRIC_NAMESPACE, metricName: 'DeadCallbacks', statistic: 'Sum', period: Duration.minutes(5) });
    for (const [name, fn] of [['Relay', props.relay], ['Dispatcher', this.dispatcher]] as const) {
      new logs.MetricFilter(this, `${name}DeadCallbacks`, {
        logGroup: fn.logGroup,
        metricNamespace: METRIC_NAMESPACE,
        metricName: 'DeadCallbacks',
        filterPattern: logs.FilterPattern.stringValue('$.message', '=', DEAD_CALLBACK_MESSAGE),
        metricValue: '$.dead',
      });
    }

    const alarm = (alarmId: string, description: string, metric: cloudwatch.IMetric, threshold: number, evaluationPeriods = 1) => {
      const a = new cloudwatch.Alarm(this, alarmId, {
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      a.addAlarmAction(new actions.SnsAction(this.alarmTopic));
      return a;
    };
    this.alarms = [
      alarm('DeadCallbacksAlarm', 'Callbacks were given up on after 24 hours of retries: see docs/operations.md (resend dead callbacks).', deadCallbacks, 1),
      alarm(
        'StreamDeadLettersAlarm',
        'Stream batches the callback dispatcher could not process; the relay delivers their callbacks, but the dispatcher is failing.',
        this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
        1,
      ),
      alarm(
        'StreamIteratorAgeAlarm',
        'The callback dispatcher is falling behind the table stream.',
        this.dispatcher.function.metric('IteratorAge', { period: Duration.minutes(5), statistic: 'Maximum' }),
        5 * 60_000,
        2,
      ),
      alarm('RelayErrorsAlarm', 'The scheduled callback relay keeps failing: due callbacks are not being delivered.', props.relay.function.metricErrors({ period: Duration.minutes(5) }), 3, 2),
    ];
  }
}
