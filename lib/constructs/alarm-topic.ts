import { RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

export interface AlarmTopicProps {
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The one SNS topic every alarm of the stage notifies (output `AlarmTopicArn`; the team subscribes
 * to it, docs/operations.md "Alarms").
 */
export class AlarmTopic extends Construct {
  readonly topic: sns.Topic;
  readonly key: kms.Key;

  constructor(scope: Construct, id: string, props: AlarmTopicProps) {
    super(scope, id);
    // CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key (its policy
    // cannot be changed to let CloudWatch use it): alarms would fire into nothing. Hence a key of
    // our own, which CloudWatch may use for this.
    this.key = new kms.Key(this, 'Key', {
      description: 'Encrypts the alarm topic',
      enableKeyRotation: true,
      removalPolicy: props.removalPolicy,
    });
    this.key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );
    this.topic = new sns.Topic(this, 'Topic', {
      displayName: 'Checkout alarms',
      enforceSSL: true,
      masterKey: this.key,
    });
  }
}
