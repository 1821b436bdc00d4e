import { Match } from 'aws-cdk-lib/assertions';
import { CALLBACK_RELAY_JOB_ID } from '../../lib/checkout-stack';
import { METRIC_NAMESPACE, STREAM_RETRY_ATTEMPTS } from '../../lib/constructs/callback-delivery';
import { JOBS } from '../../lib/jobs';
import { STAGES } from '../../lib/naming';
import { TABLE_SCHEMA } from '../../lib/table-schema';
import { flatten, logicalId, resource, resourcesOfType, synthesize, type Synthesized } from './synth';

/**
 * What carries callbacks in the cloud (lib/constructs/callback-delivery.ts): the outbox index on the
 * table, the table's stream and the dispatcher it triggers (with its dead-letter queue), the
 * scheduled relay, and the alarms on all of them.
 */
describe.each(STAGES)('callback delivery (%s)', (stage) => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthesize(stage);
  });
  const delivery = () => s.stack.callbackDelivery!;
  const tableId = () => logicalId(s.stack.table.table);
  const dispatcherId = () => logicalId(delivery().dispatcher.function);
  const dlqId = () => logicalId(delivery().deadLetterQueue);

  test('the table has the sparse outbox (sending) index, keys and the merchant (its lane), and a stream with old and new images', () => {
    const table = resource(s.template, tableId());
    expect(TABLE_SCHEMA.globalSecondaryIndexes.map((i) => i.indexName)).toContain('sending');
    expect(table.Properties.GlobalSecondaryIndexes).toContainEqual({
      IndexName: 'sending',
      KeySchema: [
        { AttributeName: 'sendPk', KeyType: 'HASH' },
        { AttributeName: 'sendSk', KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['merchantKey'] },
    });
    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
  });

  test('the relay is a scheduled job, every minute, reading the outbox index, with the merchants\' secrets', () => {
    const relay = JOBS.find((j) => j.id === CALLBACK_RELAY_JOB_ID);
    expect(relay).toMatchObject({ everyMinutes: 1, access: { merchantSecrets: true }, entry: 'lambdas/handlers/callback-job.ts' });
    expect(relay?.access.table.indexes).toEqual(['sending']);
    expect(s.stack.jobFunctions.get(CALLBACK_RELAY_JOB_ID)).toBeDefined();
  });

  test('the stream triggers the dispatcher: payment items in the outbox and those TTL removed only, bounded retries, split batches, a dead-letter queue', () => {
    const mappings = Object.values(resourcesOfType(s.template, 'AWS::Lambda::EventSourceMapping'));
    expect(mappings).toHaveLength(1);
    const { Properties } = mappings[0]!;
    expect(flatten(Properties.FunctionName)).toBe(`\${${dispatcherId()}}`);
    expect(flatten(Properties.EventSourceArn)).toBe(`\${${tableId()}.StreamArn}`);
    expect(Properties).toMatchObject({
      StartingPosition: 'LATEST',
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 1,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: STREAM_RETRY_ATTEMPTS,
      MaximumRecordAgeInSeconds: 15 * 60,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(flatten(Properties.DestinationConfig.OnFailure.Destination)).toBe(`\${${dlqId()}.Arn}`);
    expect(Properties.FilterCriteria.Filters.map((f: { Pattern: string }) => JSON.parse(f.Pattern))).toEqual([
      { dynamodb: { Keys: { sk: { S: ['PAYMENT'] } }, NewImage: { sendPk: { S: [{ exists: true }] } } } },
      // An unpaid link's state item removed by TTL: the dispatcher drops its details (ADR 0023).
      { eventName: ['REMOVE'], userIdentity: { type: ['Service'], principalId: ['dynamodb.amazonaws.com'] }, dynamodb: { Keys: { sk: { S: ['PAYMENT'] } } } },
    ]);
  });

  test('the dispatcher runs Node.js 24 on arm64 for up to a minute, may read the stream and send to its dead-letter queue', () => {
    const fn = resource(s.template, dispatcherId());
    expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Timeout: 60 });
    const roleId = logicalId(delivery().dispatcher.role);
    const allowed = Object.values(resourcesOfType(s.template, 'AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as unknown[]).some((r) => flatten(r) === `\${${roleId}}`))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as { Effect: string; Action: string | string[]; Resource: unknown }[])
      .filter((st) => st.Effect === 'Allow')
      .flatMap((st) => [st.Action].flat().flatMap((a) => [st.Resource].flat().map((r) => `${a} ${flatten(r)}`)));
    for (const action of ['dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:DescribeStream']) {
      expect(allowed).toContain(`${action} \${${tableId()}.StreamArn}`);
    }
    expect(allowed).toContain(`sqs:SendMessage \${${dlqId()}.Arn}`);
    expect(allowed).toContain(`dynamodb:UpdateItem \${${tableId()}.Arn}`);
  });

  test('the dead-letter queue is encrypted, kept 14 days and refuses plain HTTP', () => {
    const queue = resource(s.template, dlqId());
    expect(queue.Properties).toEqual({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    expect(queue.DeletionPolicy).toBe(stage === 'prod' ? 'Retain' : 'Delete');
    s.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: dlqId() }],
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  test('dead callbacks are a metric the delivery code emits (EMF), not a log filter', () => {
    s.template.resourceCountIs('AWS::Logs::MetricFilter', 0);
  });

  test('four alarms (dead callbacks, dead-lettered stream batches, stream lag, relay errors) notify the stage\'s encrypted alarm topic', () => {
    // In the observability nested stack, apart from the main stack's resource budget.
    const alarms = delivery().alarms.map((a) => resource(s.monitoring, logicalId(a)));
    const topicId = logicalId(delivery().alarmTopic);
    expect(alarms).toHaveLength(4);
    for (const a of alarms) {
      expect(a.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(a.Properties.TreatMissingData).toBe('notBreaching');
      expect(a.Properties.AlarmDescription).toMatch(/Runbook: docs\/operations\.md#alarm-[a-z]+$/);
    }
    const byMetric = Object.fromEntries(alarms.map((a) => [a.Properties.MetricName, a.Properties]));
    expect(byMetric.DeadCallbacks).toMatchObject({
      Namespace: METRIC_NAMESPACE,
      Threshold: 1,
      Statistic: 'Sum',
      Dimensions: [
        { Name: 'service', Value: 'checkout' },
        { Name: 'stage', Value: stage },
      ],
    });
    expect(byMetric.ApproximateNumberOfMessagesVisible).toMatchObject({ Namespace: 'AWS/SQS', Threshold: 1, Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId(), 'QueueName'] } }] });
    expect(byMetric.IteratorAge).toMatchObject({ Namespace: 'AWS/Lambda', Threshold: 300_000, Dimensions: [{ Name: 'FunctionName', Value: { Ref: dispatcherId() } }] });
    expect(byMetric.Errors).toMatchObject({ Namespace: 'AWS/Lambda', Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(s.stack.jobFunctions.get(CALLBACK_RELAY_JOB_ID)!.function) } }] });
    const topic = resource(s.template, topicId);
    // Not the AWS-managed SNS key: CloudWatch could not publish to the topic.
    const keyId = logicalId(delivery().alarmKey);
    expect(topic.Properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    const key = resource(s.template, keyId);
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.Properties.KeyPolicy.Statement).toContainEqual({
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      Resource: '*',
    });
    s.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });
});
