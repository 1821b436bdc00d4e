import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { tablePolicy, type TableAccess } from '../table-access';
import { LEGACY_INDEXES, TABLE_SCHEMA, type IndexName, type LegacyIndexName } from '../table-schema';

export interface CheckoutTableProps {
  /**
   * A fixed physical name; none by default: CloudFormation generates one, so a retained table of a
   * failed first deploy never blocks the next one ("already exists"). Tools find the name in the
   * stack's outputs (TableName).
   */
  readonly tableName?: string;
  /** Keep the table (and refuse to delete it) when the stack goes away: real payments live here. */
  readonly retainData: boolean;
  /**
   * The indexes to have (default: every current one); during a migration fewer of them, and some of
   * the old layouts' (docs/operations.md, "Migrating an existing table to the sharded indexes",
   * "Migrating the search index to keys only").
   */
  readonly indexes?: { readonly current: readonly IndexName[]; readonly legacy: readonly LegacyIndexName[] };
}

/**
 * The single table, shaped by TABLE_SCHEMA (the same schema the local runner creates). What a route
 * or job may do to it is its declaration turned into IAM statements by lib/table-access.ts.
 */
export class CheckoutTable extends Construct {
  readonly table: dynamodb.Table;
  /** The table's global secondary indexes (each gets its own throttle alarm). */
  readonly indexNames: readonly string[];

  constructor(scope: Construct, id: string, props: CheckoutTableProps) {
    super(scope, id);

    const stringKey = (name: string): dynamodb.Attribute => ({ name, type: dynamodb.AttributeType.STRING });

    this.table = new dynamodb.Table(this, 'Table', {
      ...(props.tableName ? { tableName: props.tableName } : {}),
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

    const wanted = props.indexes;
    const indexNames: string[] = [];
    // An old index as it was deployed: a projection cannot change in place, CloudFormation would refuse the update.
    for (const index of LEGACY_INDEXES.filter((g) => wanted?.legacy.includes(g.indexName))) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: stringKey(index.partitionKey),
        sortKey: stringKey(index.sortKey),
        ...(index.projection === 'ALL'
          ? { projectionType: dynamodb.ProjectionType.ALL }
          : { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...index.projection] }),
      });
      indexNames.push(index.indexName);
    }
    for (const index of TABLE_SCHEMA.globalSecondaryIndexes.filter((g) => !wanted || wanted.current.includes(g.indexName))) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: stringKey(index.partitionKey),
        sortKey: stringKey(index.sortKey),
        ...(index.projection.length
          ? { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...index.projection] }
          : { projectionType: dynamodb.ProjectionType.KEYS_ONLY }),
      });
      indexNames.push(index.indexName);
    }
    this.indexNames = indexNames;
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
