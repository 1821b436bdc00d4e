import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

export interface MerchantSecretsProps {
  /** Name prefix of every merchant's secret (lib/naming.ts merchantSecretPrefix). */
  readonly prefix: string;
  /**
   * What the family holds and who creates its secrets, for the wildcard's reason (default: the
   * merchants' signing passwords). The acquirer accounts' passwords are a family of their own.
   */
  readonly holds?: string;
}

/**
 * The merchants' signing passwords in Secrets Manager. The merchant CLI or an admin in the portal
 * creates one secret per merchant under `prefix`; the stack creates none (they are encrypted with
 * the AWS-managed key, so no KMS grant is needed either). It hands out read access, and write
 * access to the portal's merchant administration routes only.
 */
export class MerchantSecrets extends Construct {
  readonly prefix: string;
  /** Every merchant secret, and nothing else: Secrets Manager appends a random suffix to names. */
  readonly secretArnPattern: string;
  private readonly holds: string;

  constructor(scope: Construct, id: string, props: MerchantSecretsProps) {
    super(scope, id);
    this.prefix = props.prefix;
    this.holds = props.holds ?? 'Merchant secrets are created at run time (merchant CLI, admin portal), one per merchant';
    this.secretArnPattern = Stack.of(this).formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${props.prefix}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
  }

  /** GetSecretValue on merchant secrets only; `role` is the function role that holds the grant. */
  grantRead(role: iam.IRole): void {
    this.grant(role, ['secretsmanager:GetSecretValue']);
  }

  /**
   * Reading, creating and rotating merchant secrets (the portal's merchant administration): a new
   * merchant's secret is created, a rotation puts a new version. Never delete.
   */
  grantWrite(role: iam.IRole): void {
    this.grant(role, ['secretsmanager:CreateSecret', 'secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue']);
  }

  private grant(role: iam.IRole, actions: string[]): void {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [this.secretArnPattern] }));
    // cdk-nag names a wildcard finding after the flattened resource; the stack is environment
    // agnostic, so the ARN always flattens to these pseudo parameters.
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${this.prefix}*]`,
      reason: `${this.holds}, and Secrets Manager appends a random suffix to each name, so the prefix wildcard is the narrowest possible grant.`,
    });
  }
}
