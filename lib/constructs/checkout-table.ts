import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { TableAccess } from '../routes';
import { TABLE_SCHEMA } from '../table-schema';

export interface CheckoutTableProps {
  readonly tableName: string;
  /** Keep the table (and refuse to delete it) when the stack goes away: real payments live here. */
  readonly retainData: boolean;
}

/** Read actions; only Query makes sense on a secondary index. */
const READ_TABLE_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'];
const READ_INDEX_ACTIONS = ['dynamodb:Query'];
/** Item writes; ConditionCheckItem lets a transaction assert another item's state without writing it. */
const WRITE_TABLE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'];

/** Partition key prefix of audit entries (lambdas/adapters/dynamodb/keys.ts `key.audit`). */
const AUDIT_PARTITION_PREFIX = 'AUDIT#';
/**
 * What nobody may do to an audit entry. PutItem stays allowed: an entry is written once with
 * `attribute_not_exists(pk)` (audit-log.ts), and IAM has no condition key for a write's condition
 * expression. BatchWriteItem is not granted at all; it is denied here so a later grant cannot
 * reopen the log. Inside TransactWriteItems each update or delete is authorized as the single
 * action, so the Deny covers transactions too.
 */
const AUDIT_DENIED_ACTIONS = ['dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

/**
 * The single table, shaped by TABLE_SCHEMA (the same schema the local runner creates), and the only
 * place that decides which DynamoDB actions a route's or job's declared access stands for.
 */
export class CheckoutTable extends Construct {
  readonly table: dynamodb.Table;
  /** One ARN per TABLE_SCHEMA index, so grants name indexes instead of `index/*`. */
  readonly indexArns: readonly string[];

  constructor(scope: Construct, id: string, props: CheckoutTableProps) {
    super(scope, id);

    const stringKey = (name: string): dynamodb.Attribute => ({ name, type: dynamodb.AttributeType.STRING });

    this.table = new dynamodb.Table(this, 'Table', {
      tableName: props.tableName,
      partitionKey: stringKey(TABLE_SCHEMA.partitionKey),
      sortKey: stringKey(TABLE_SCHEMA.sortKey),
      timeToLiveAttribute: TABLE_SCHEMA.timeToLiveAttribute,
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      deletionProtection: props.retainData,
      // The callback dispatcher reads payment changes from here (lib/constructs/callback-delivery.ts).
      stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
      removalPolicy: props.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    for (const index of TABLE_SCHEMA.globalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: stringKey(index.partitionKey),
        sortKey: stringKey(index.sortKey),
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }

    this.indexArns = TABLE_SCHEMA.globalSecondaryIndexes.map((index) => `${this.table.tableArn}/index/${index.indexName}`);
  }

  /** Grants exactly what `access` declares; a new TableAccess kind fails to compile until mapped here. */
  grantAccess(grantee: iam.IGrantable, access: TableAccess): void {
    switch (access) {
      case 'none':
        return;
      case 'read':
        this.grantRead(grantee);
        return;
      case 'readWrite':
        this.grantRead(grantee);
        grantee.grantPrincipal.addToPrincipalPolicy(
          new iam.PolicyStatement({ actions: WRITE_TABLE_ACTIONS, resources: [this.table.tableArn] }),
        );
        this.denyAuditRewrites(grantee);
        return;
      default: {
        const unhandled: never = access;
        throw new Error(`Unhandled table access: ${String(unhandled)}`);
      }
    }
  }

  /** The audit log is append-only for every writer: an explicit Deny wins over any Allow. */
  private denyAuditRewrites(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        effect: iam.Effect.DENY,
        actions: AUDIT_DENIED_ACTIONS,
        resources: [this.table.tableArn],
        conditions: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [`${AUDIT_PARTITION_PREFIX}*`] } },
      }),
    );
  }

  private grantRead(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: READ_TABLE_ACTIONS, resources: [this.table.tableArn] }),
    );
    if (this.indexArns.length > 0) {
      grantee.grantPrincipal.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: READ_INDEX_ACTIONS, resources: [...this.indexArns] }),
      );
    }
  }
}
