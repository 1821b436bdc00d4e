import { Match } from 'aws-cdk-lib/assertions';
import { RECEIPT_JOB_ID } from '../../lib/jobs';
import { STAGE_FILES } from '../../lib/stages';
import { RECEIPTS_CONTEXT, flatten, logicalId, resource, resourcesOfType, synthesize } from './synth';

/**
 * E-mail receipts in the stack (ADR 0037): the stage's verified sender and configuration set, the
 * bounce and complaint path to the feedback function, and one SES grant — the receipt job's, on
 * that identity and configuration set, from the sender address only.
 */
describe.each(['dev', 'prod'] as const)('receipts (%s)', (stage) => {
  const { stack, template, monitoring } = synthesize(stage);
  const receipts = stack.receiptMail!;
  // The sender a deploy names (lib/stages leaves it to the platform team; the tests give it).
  const sender = RECEIPTS_CONTEXT.receiptSender;

  test('a domain identity of the stage\'s sender, in a configuration set that requires TLS and keeps SES\'s suppression on', () => {
    template.hasResourceProperties('AWS::SES::EmailIdentity', {
      EmailIdentity: sender.slice(sender.indexOf('@') + 1),
      ConfigurationSetAttributes: { ConfigurationSetName: { Ref: logicalId(receipts.configurationSet) } },
    });
    template.hasResourceProperties('AWS::SES::ConfigurationSet', {
      DeliveryOptions: { TlsPolicy: 'REQUIRE' },
      SuppressionOptions: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'] },
      ReputationOptions: { ReputationMetricsEnabled: true },
    });
    expect(template.toJSON().Outputs.ReceiptSender.Value).toBe(sender);
    expect(template.toJSON().Outputs.ReceiptDkimRecords).toBeDefined();
  });

  test('bounces and complaints go to the default event bus, and this configuration set\'s to the feedback function', () => {
    template.hasResourceProperties('AWS::SES::ConfigurationSetEventDestination', {
      EventDestination: Match.objectLike({ Enabled: true, MatchingEventTypes: ['bounce', 'complaint'], EventBridgeDestination: { EventBusArn: Match.anyValue() } }),
    });
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.ses'],
        'detail-type': ['Email Bounced', 'Email Complained'],
        detail: { mail: { tags: { 'ses:configuration-set': [{ Ref: logicalId(receipts.configurationSet) }] } } },
      },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalId(receipts.feedback.function), 'Arn'] }, RetryPolicy: Match.objectLike({ MaximumRetryAttempts: 3 }), DeadLetterConfig: Match.anyValue() })],
    });
  });

  test('only the receipt job may send, on the identity and the configuration set, from the sender', () => {
    const policies = resourcesOfType(template, 'AWS::IAM::Policy');
    const sesStatements = Object.entries(policies).flatMap(([id, p]) =>
      (p.Properties.PolicyDocument.Statement as { Action: string | string[] }[])
        .filter((s) => [s.Action].flat().some((a) => a.startsWith('ses:')))
        .map((s) => ({ id, roles: p.Properties.Roles, statement: s })),
    );
    const job = stack.jobFunctions.get(RECEIPT_JOB_ID)!;
    expect(sesStatements).toHaveLength(1);
    expect(sesStatements[0]!.roles).toEqual([{ Ref: logicalId(job.role) }]);
    const { Resource, ...rest } = sesStatements[0]!.statement as unknown as { Resource: unknown[] };
    expect(rest).toEqual({ Effect: 'Allow', Action: 'ses:SendEmail', Condition: { StringEquals: { 'ses:FromAddress': sender } } });
    const arn = (what: string) => `arn:\${AWS::Partition}:ses:\${AWS::Region}:\${AWS::AccountId}:${what}`;
    expect(Resource.map(flatten).sort()).toEqual([arn(`configuration-set/\${${logicalId(receipts.configurationSet)}}`), arn(`identity/\${${logicalId(receipts.identity)}}`)]);
  });

  test('the functions that queue or send receipts are told the sender, the job its configuration set', () => {
    const variables = (fn: { function: unknown }) => resource(template, logicalId(fn.function as never)).Properties.Environment.Variables as Record<string, unknown>;
    expect(variables(stack.jobFunctions.get(RECEIPT_JOB_ID)!)).toMatchObject({ RECEIPT_SENDER: sender, RECEIPT_CONFIGURATION_SET: { Ref: logicalId(receipts.configurationSet) } });
    expect(variables(stack.jobFunctions.get('DeliverCallbacks')!)).toMatchObject({ RECEIPT_SENDER: sender });
    expect(variables(stack.callbackDelivery!.dispatcher)).toMatchObject({ RECEIPT_SENDER: sender });
    expect(variables(stack.functions.get('CreateSession')!).RECEIPT_SENDER).toBeUndefined();
    expect(variables(receipts.feedback).RECEIPT_SENDER).toBeUndefined();
  });

  test('its alarms are in the monitoring stack and notify the stage\'s topic', () => {
    expect(receipts.alarms.map((a) => a.node.id)).toEqual(['ReceiptsFailedAlarm', 'ReceiptBacklogAlarm', 'MailBounceRateAlarm', 'MailComplaintRateAlarm']);
    for (const alarm of receipts.alarms) {
      expect(resource(monitoring, logicalId(alarm)).Properties.AlarmActions).toEqual([{ Ref: logicalId(stack.alarmTopic.topic) }]);
    }
  });
});

test.each(['dev', 'staging', 'prod'] as const)('%s names no receipts sender in lib/stages: the platform team writes the one it verified in SES', (stage) => {
  expect(STAGE_FILES[stage].receipts).toBeUndefined();
});

test('a stage deployed without a sender (prod as lib/stages has it) has no identity, configuration set, receipt job or feedback path, and tells no function a sender', () => {
  const { stack, template } = synthesize('prod', { context: { receiptSender: '' } });
  expect(stack.receiptMail).toBeUndefined();
  expect(stack.jobFunctions.has(RECEIPT_JOB_ID)).toBe(false);
  for (const type of ['AWS::SES::EmailIdentity', 'AWS::SES::ConfigurationSet']) expect(Object.keys(template.findResources(type))).toEqual([]);
  for (const fn of Object.values(template.findResources('AWS::Lambda::Function'))) {
    expect((fn as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }).Properties.Environment?.Variables?.RECEIPT_SENDER).toBeUndefined();
  }
});
