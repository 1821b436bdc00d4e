import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { tablePolicy, type TableAccess } from '../table-access';
import { TABLE_SCHEMA } from '../table-schema';

export interface CheckoutTableProps {
  readonly tableName: string;
  /** Keep the table (and refuse to delete it) when the stack goes away: real payments live here. */
  readonly retainData: boolean;
}

/**
 * The single table, shaped by TABLE_SCHEMA (the same schema the local runner creates). What a route
 * or job may do to it is its declaration turned into IAM statements by lib/table-access.ts.
 */
export class CheckoutTable extends Construct {
  readonly table: dynamodb.Table;

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
  }

  /**
   * Grants exactly what `access` declares: item actions bound to the declared kinds' partition key
   * prefixes, Query on the declared indexes, and for any writer the Deny that keeps audit entries
   * unchangeable (lib/table-access.ts tablePolicy).
   */
  grantAccess(grantee: iam.IGrantable, access: TableAccess): void {
    for (const statement of tablePolicy(access, this.table.tableArn)) {
      grantee.grantPrincipal.addToPrincipalPolicy(iam.PolicyStatement.fromJson(statement));
    }
  }
}
