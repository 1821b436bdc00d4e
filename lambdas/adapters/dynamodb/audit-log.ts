import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AuditEntry, AuditLog } from '../../ports/operators';
import { GSI2, key, withoutStorageAttributes } from './keys';
import { decodeCursor, encodeCursor } from './cursor';

const DAY_MS = 24 * 3600_000;

/**
 * The audit log: one item per entry under its day, written once (a conditional put), never updated.
 * The same item is indexed by its target, for a payment's or merchant's own history.
 */
export class DynamoAuditLog implements AuditLog {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async append(entry: AuditEntry): Promise<void> {
    const sortKey = `${entry.at}#${entry.id}`;
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...key.audit(entry.at.slice(0, 10), sortKey), kind: 'audit', ...entry, gsi2pk: key.auditOf(entry.target), gsi2sk: sortKey },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async list(options: { limit: number; cursor?: string; until: Date; days: number }): Promise<{ entries: AuditEntry[]; cursor?: string }> {
    const start = options.cursor ? decodeCursor<{ day: number; key?: Record<string, unknown> }>(options.cursor) : { day: 0 };
    const entries: AuditEntry[] = [];
    let day = start.day;
    let exclusive = start.key;
    while (day < options.days && entries.length < options.limit) {
      const date = new Date(options.until.getTime() - day * DAY_MS).toISOString().slice(0, 10);
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': `AUDIT#${date}` },
          ScanIndexForward: false,
          Limit: options.limit - entries.length,
          ExclusiveStartKey: exclusive,
        }),
      );
      entries.push(...(out.Items ?? []).map((i) => withoutStorageAttributes<AuditEntry>(i)));
      if (out.LastEvaluatedKey) {
        exclusive = out.LastEvaluatedKey;
      } else {
        exclusive = undefined;
        day++;
      }
    }
    const more = day < options.days;
    return { entries, ...(more ? { cursor: encodeCursor({ day, key: exclusive }) } : {}) };
  }

  async forTarget(target: string, limit: number): Promise<AuditEntry[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: GSI2,
        KeyConditionExpression: 'gsi2pk = :pk',
        ExpressionAttributeValues: { ':pk': key.auditOf(target) },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map((i) => withoutStorageAttributes<AuditEntry>(i));
  }
}
