import { CfnOutput, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct, type Node } from 'constructs';
import { ANCHOR_PREFIX } from '../../lambdas/adapters/s3/audit-anchors';
import type { Stage } from '../naming';
import type { CheckoutFunction } from './checkout-function';

export const AUDIT_ANCHOR_RETENTION_CONTEXT = 'auditAnchorRetentionDays';
/**
 * How long no one can remove an anchor. prod keeps them seven years, as long as payment records are
 * kept; staging and dev a day, so their buckets empty themselves soon after a stage is deleted.
 */
export const DEFAULT_AUDIT_ANCHOR_RETENTION_DAYS: Readonly<Record<Stage, number>> = { dev: 1, staging: 1, prod: 2557 };
/** S3 Object Lock accepts up to 100 years. */
const RETENTION_RANGE = { min: 1, max: 36_500 } as const;

/** `{ "prod": 2557 }` (per stage) or one number for every stage; a CLI `-c` value arrives as a string. */
export function auditAnchorRetentionDaysFromContext(node: Node, stage: Stage): number {
  const value: unknown = node.tryGetContext(AUDIT_ANCHOR_RETENTION_CONTEXT);
  const chosen = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[stage] : value;
  if (chosen === undefined) return DEFAULT_AUDIT_ANCHOR_RETENTION_DAYS[stage];
  const days = typeof chosen === 'string' && chosen.trim() !== '' ? Number(chosen) : chosen;
  if (typeof days !== 'number' || !Number.isInteger(days) || days < RETENTION_RANGE.min || days > RETENTION_RANGE.max) {
    throw new Error(`Context ${AUDIT_ANCHOR_RETENTION_CONTEXT} for ${stage} must be a whole number of days from ${RETENTION_RANGE.min} to ${RETENTION_RANGE.max}, got ${JSON.stringify(chosen)}`);
  }
  return days;
}

export interface AuditAnchorProps {
  readonly retentionDays: number;
  /** The scheduled job that exports the heads (lib/jobs.ts AUDIT_ANCHOR_JOB_ID): it alone may put. */
  readonly exporter: CheckoutFunction;
}

/**
 * Where the audit chain's heads live outside the table (lambdas/domain/audit-chain.ts): an S3
 * bucket with Object Lock in compliance mode, so no one, the account's root included, can delete or
 * overwrite an anchor until its retention ends. The bucket policy refuses every delete and every
 * put that could replace an object (a put must carry `If-None-Match: *`); the exporter may only put
 * under the anchors' prefix. verify-audit reads every version (docs/operations.md, "Audit log").
 * The bucket outlives its stack whatever the stage: CloudFormation cannot delete locked objects,
 * and the lifecycle rule removes them once their retention has passed.
 */
export class AuditAnchor extends Construct {
  readonly bucket: s3.Bucket;
  readonly retentionDays: number;

  constructor(scope: Construct, id: string, props: AuditAnchorProps) {
    super(scope, id);
    this.retentionDays = props.retentionDays;
    this.bucket = new s3.Bucket(this, 'Bucket', {
      versioned: true,
      objectLockEnabled: true,
      objectLockDefaultRetention: s3.ObjectLockRetention.compliance(Duration.days(props.retentionDays)),
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        {
          id: 'AnchorsPastRetention',
          expiration: Duration.days(props.retentionDays + 1),
          noncurrentVersionExpiration: Duration.days(props.retentionDays + 1),
        },
      ],
    });
    this.bucket.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'DenyDeletes',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        // Not even a delete marker: a "deleted" anchor would read as a missing one. (The lifecycle
        // rule is S3's own and not subject to the policy; Object Lock holds it off until retention ends.)
        actions: ['s3:DeleteObject', 's3:DeleteObjectVersion'],
        resources: [this.bucket.arnForObjects('*')],
      }),
    );
    this.bucket.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'DenyOverwrites',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['s3:PutObject'],
        resources: [this.bucket.arnForObjects('*')],
        conditions: { Null: { 's3:if-none-match': 'true' } },
      }),
    );
    props.exporter.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [this.bucket.arnForObjects(`${ANCHOR_PREFIX}*`)] }),
    );
    Validations.of(props.exporter.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket)}.Arn>/${ANCHOR_PREFIX}*]`,
      reason: 'One object per anchor, named by day and sequence as the export runs: the anchors\' prefix is the narrowest grant, and put is its only action.',
    });
    props.exporter.function.addEnvironment('AUDIT_ANCHOR_BUCKET', this.bucket.bucketName);
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Server access logs would go to a second bucket that is not write-once. Every anchor is itself write-once and versioned: a write that should not be there stays visible to verify-audit, which reads every version.',
    });
    new CfnOutput(Stack.of(this), 'AuditAnchorBucket', { value: this.bucket.bucketName, description: `The audit chain's heads, write-once for ${props.retentionDays} day${props.retentionDays === 1 ? '' : 's'} (verify-audit reads them)` });
  }
}
