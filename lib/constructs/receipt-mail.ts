import { CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as ses from 'aws-cdk-lib/aws-ses';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { RECEIPT_FEEDBACK } from '../jobs';
import type { ReceiptSettings } from '../stage-settings';
import type { AlarmTopic } from './alarm-topic';
import { CheckoutFunction, type FunctionSettings } from './checkout-function';
import { alarmMaker, runbook, serviceMetric } from './monitoring-metrics';

export interface ReceiptMailProps {
  readonly settings: FunctionSettings;
  readonly receipts: ReceiptSettings;
  /** The receipt job (lib/jobs.ts RECEIPT_JOB_ID): it alone may send, from the sender, in the configuration set. */
  readonly sender: CheckoutFunction;
  /** Where bounce and complaint events EventBridge cannot hand to the feedback function go (the jobs' dead-letter queue). */
  readonly deadLetterQueue: sqs.IQueue;
  readonly alarms: AlarmTopic;
  /** Where the alarms are made: the monitoring's nested stack (the main stack's 500 resources are spoken for). */
  readonly alarmScope: Construct;
}

/** EventBridge's retries of an event the feedback function failed on; then the dead-letter queue. */
export const FEEDBACK_DELIVERY_RETRIES = 3;
/** SES reviews an account at a 5 % bounce rate and may pause it at 10 %; at 0.1 % complaints it reviews, at 0.5 % it may pause. Alarm before either. */
export const MAIL_REPUTATION_LIMITS = { bounceRate: 0.04, complaintRate: 0.0008 } as const;
/** How long a receipt's backlog may wait before it alarms: the job runs every minute. */
const BACKLOG_ALARM_SECONDS = 15 * 60;

/**
 * E-mail receipts in the cloud (ADR 0037):
 * - the stage's verified sender: an SES identity of its domain (DKIM records to publish, output
 *   below) or of the one address;
 * - a configuration set (TLS required, SES's own suppression of bounces and complaints kept on,
 *   reputation metrics on) whose event destination puts bounces and complaints on the account's
 *   default event bus; a rule of this stage's configuration set hands them to the feedback function,
 *   which suppresses the addresses by digest (failed events: EventBridge retries, then the jobs'
 *   dead-letter queue and its alarm);
 * - the receipt job's one SES grant: ses:SendEmail on this identity and this configuration set,
 *   from the sender address only;
 * - alarms: receipts given up, the receipts' backlog, and the account's bounce and complaint rates
 *   before SES would review or pause sending.
 */
export class ReceiptMail extends Construct {
  readonly identity: ses.EmailIdentity;
  readonly configurationSet: ses.ConfigurationSet;
  readonly feedback: CheckoutFunction;
  readonly feedbackRule: events.Rule;
  readonly alarms: readonly cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, props: ReceiptMailProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { sender, verify } = props.receipts;
    const domain = sender.slice(sender.lastIndexOf('@') + 1);

    this.configurationSet = new ses.ConfigurationSet(this, 'ConfigurationSet', {
      tlsPolicy: ses.ConfigurationSetTlsPolicy.REQUIRE,
      reputationMetrics: true,
      suppressionReasons: ses.SuppressionReasons.BOUNCES_AND_COMPLAINTS,
      sendingEnabled: true,
    });
    this.identity = new ses.EmailIdentity(this, 'Sender', {
      identity: verify === 'domain' ? ses.Identity.domain(domain) : ses.Identity.email(sender),
      configurationSet: this.configurationSet,
    });
    this.configurationSet.addEventDestination('Feedback', {
      destination: ses.EventDestination.eventBus(events.EventBus.fromEventBusName(this, 'DefaultBus', 'default')),
      events: [ses.EmailSendingEvent.BOUNCE, ses.EmailSendingEvent.COMPLAINT],
    });

    this.feedback = new CheckoutFunction(this, 'Feedback', {
      settings: props.settings,
      purpose: 'Receipt feedback: suppresses addresses SES reports bounced or complained',
      entry: RECEIPT_FEEDBACK.entry,
      access: RECEIPT_FEEDBACK.access,
      timeoutSeconds: 30,
    });
    this.feedbackRule = new events.Rule(this, 'FeedbackRule', {
      description: `Bounces and complaints of ${stack.stackName}'s receipts (configuration set ${this.configurationSet.configurationSetName})`,
      eventPattern: {
        source: ['aws.ses'],
        detailType: ['Email Bounced', 'Email Complained'],
        detail: { mail: { tags: { 'ses:configuration-set': [this.configurationSet.configurationSetName] } } },
      },
      targets: [new targets.LambdaFunction(this.feedback.function, { retryAttempts: FEEDBACK_DELIVERY_RETRIES, maxEventAge: Duration.hours(6), deadLetterQueue: props.deadLetterQueue })],
    });

    const configurationSetArn = stack.formatArn({ service: 'ses', resource: 'configuration-set', resourceName: this.configurationSet.configurationSetName });
    props.sender.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ses:SendEmail'],
        // SES v2 authorizes a send on the identity and on the configuration set named in it.
        resources: [this.identity.emailIdentityArn, configurationSetArn],
        conditions: { StringEquals: { 'ses:FromAddress': sender } },
      }),
    );
    props.sender.function.addEnvironment('RECEIPT_CONFIGURATION_SET', this.configurationSet.configurationSetName);

    const alarmScope = new Construct(props.alarmScope, 'ReceiptAlarms');
    const alarm = alarmMaker(alarmScope, props.alarms.topic);
    const stage = props.settings.stage;
    const reputation = (metricName: string) => new cloudwatch.Metric({ namespace: 'AWS/SES', metricName, statistic: 'Maximum', period: Duration.hours(1) });
    this.alarms = [
      alarm('ReceiptsFailedAlarm', `E-mail receipts were given up after their tries. ${runbook('ReceiptsFailed')}`, serviceMetric(stage, 'ReceiptsFailed', { statistic: 'Sum', period: Duration.minutes(15) }), 1, 1),
      alarm(
        'ReceiptBacklogAlarm',
        `The receipt queue's oldest due receipt has waited ${BACKLOG_ALARM_SECONDS / 60} minutes or more, or the receipt job has reported nothing for ten minutes. ${runbook('JobBacklog')}`,
        serviceMetric(stage, 'BacklogOldestAgeReceipts', { statistic: 'Maximum' }),
        BACKLOG_ALARM_SECONDS,
        2,
        cloudwatch.TreatMissingData.BREACHING,
      ),
      alarm('MailBounceRateAlarm', `The account's SES bounce rate is ${MAIL_REPUTATION_LIMITS.bounceRate * 100} % or more; SES reviews at 5 % and may pause sending. ${runbook('MailReputation')}`, reputation('Reputation.BounceRate'), MAIL_REPUTATION_LIMITS.bounceRate, 1),
      alarm('MailComplaintRateAlarm', `The account's SES complaint rate is ${MAIL_REPUTATION_LIMITS.complaintRate * 100} % or more; SES reviews at 0.1 % and may pause sending. ${runbook('MailReputation')}`, reputation('Reputation.ComplaintRate'), MAIL_REPUTATION_LIMITS.complaintRate, 1),
    ];

    new CfnOutput(stack, 'ReceiptSender', { value: sender, description: `E-mail receipts come from here; SES must verify the ${verify} first (docs/operations.md, "E-mail receipts")` });
    new CfnOutput(stack, 'ReceiptConfigurationSet', { value: this.configurationSet.configurationSetName });
    if (verify === 'domain') {
      new CfnOutput(stack, 'ReceiptDkimRecords', {
        value: stack.toJsonString(this.identity.dkimRecords.map((r) => ({ cname: r.name, value: r.value }))),
        description: `Publish these three CNAME records in ${domain}'s DNS: SES verifies the domain by them (DKIM)`,
      });
    }
  }
}
