import { GetCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from './client';
import { key, outboxPartitionOf, searchPartitionOf, workPartitionOf, type ShardCounts } from './keys';

export interface MigrationReport {
  /** Items read that still had a key of the old layout, or an entry in a shard of other counts. */
  readonly found: number;
  readonly written: number;
  /** Items changed by someone else between the read and the write, read again and written. */
  readonly reread: number;
}

/** Tries per item: each lost race is a write someone else made, which the next read sees. */
const TRIES = 5;

/**
 * The new index keys of an item of the old layout (docs/operations.md, "Migrating an existing
 * table"): the work queue, the outbox and the admin search in the payment's shard, an audit entry's
 * history key in the lookup index; the old keys removed. And an entry of the current layout in a
 * shard of other counts than the table's (a data directory written before its counts changed):
 * moved to the payment's shard under these. Undefined when nothing is to be done.
 */
export function migratedKeys(item: Record<string, unknown>, shards: ShardCounts): { set: Record<string, string>; remove: string[]; unchanged: Record<string, unknown> } | undefined {
  const pk = String(item.pk);
  const set: Record<string, string> = {};
  const remove: string[] = [];
  const unchanged: Record<string, unknown> = {};
  const paymentId = pk.startsWith('PAYMENT#') && item.sk === 'PAYMENT' ? pk.slice('PAYMENT#'.length) : undefined;
  if (typeof item.queuePk === 'string' && typeof item.queueSk === 'string' && paymentId) {
    set.workPk = workPartitionOf(item.queuePk, paymentId, shards);
    set.workSk = item.queueSk;
    remove.push('queuePk', 'queueSk');
    unchanged.queueSk = item.queueSk;
  }
  if (typeof item.outboxPk === 'string' && typeof item.outboxSk === 'string' && paymentId) {
    // A leased entry's sort key was `<lease end>#<id>#<tag>`: due at the lease's end, as before.
    const [at = '', id = paymentId] = item.outboxSk.split('#');
    set.sendPk = outboxPartitionOf(paymentId, shards);
    set.sendSk = `${at}#${id}`;
    remove.push('outboxPk', 'outboxSk');
    unchanged.outboxSk = item.outboxSk;
  }
  if (typeof item.gsi2pk === 'string') {
    if (item.gsi2pk.startsWith('AUDITOF#')) {
      set.gsi1pk = item.gsi2pk;
      set.gsi1sk = String(item.gsi2sk);
    } else if (paymentId && typeof item.merchantKey === 'string' && typeof item.createdAt === 'string') {
      set.searchPk = searchPartitionOf(item.merchantKey, item.createdAt, paymentId, shards);
      set.searchSk = `${item.createdAt}#${paymentId}`;
    }
    remove.push('gsi2pk', 'gsi2sk');
    unchanged.gsi2pk = item.gsi2pk;
  }
  if (paymentId) {
    const move = (attribute: string, wanted: string | undefined) => {
      const now = item[attribute];
      if (typeof now === 'string' && set[attribute] === undefined && wanted !== undefined && wanted !== now) {
        set[attribute] = wanted;
        unchanged[attribute] = now;
      }
    };
    if (typeof item.workPk === 'string') move('workPk', workPartitionOf(item.workPk.slice(0, item.workPk.lastIndexOf('#')), paymentId, shards));
    move('sendPk', outboxPartitionOf(paymentId, shards));
    if (typeof item.merchantKey === 'string' && typeof item.createdAt === 'string') move('searchPk', searchPartitionOf(item.merchantKey, item.createdAt, paymentId, shards));
  }
  // A payment's details item carries its search entry (payment-items.ts): its merchant and day are in its keys.
  const detailsOf = pk.startsWith('PAYMENT#') && item.sk === key.paymentDetails('').sk ? pk.slice('PAYMENT#'.length) : undefined;
  if (detailsOf && typeof item.searchPk === 'string' && typeof item.searchSk === 'string') {
    const wanted = searchPartitionOf(item.searchPk.slice(0, item.searchPk.indexOf('#')), item.searchSk.slice(0, item.searchSk.indexOf('#')), detailsOf, shards);
    if (wanted !== item.searchPk) {
      set.searchPk = wanted;
      unchanged.searchPk = item.searchPk;
    }
  }
  // A due e-mail receipt (RECEIPT#<payment id>) sits in the work index's `receipt` queue, in its payment's shard.
  const receiptOf = pk.startsWith('RECEIPT#') && item.sk === 'RECEIPT' ? pk.slice('RECEIPT#'.length) : undefined;
  if (receiptOf && typeof item.workPk === 'string') {
    const wanted = workPartitionOf(item.workPk.slice(0, item.workPk.lastIndexOf('#')), receiptOf, shards);
    if (wanted !== item.workPk) {
      set.workPk = wanted;
      unchanged.workPk = item.workPk;
    }
  }
  return remove.length || Object.keys(set).length ? { set, remove, unchanged } : undefined;
}

/**
 * Writes the new index keys of every item that still has a key of the old layout, each write
 * conditioned on the old keys it replaces being unchanged; an item changed meanwhile is read again.
 * Reads the table once (a scan filtered to old keys); safe to run again and beside live traffic.
 * With `reshard` (the table's counts changed) it reads every payment with an index entry and moves
 * the entries that sit in a shard of other counts.
 */
export async function migrateIndexKeys(db: DynamoDBDocumentClient, tableName: string, shards: ShardCounts, options: { readonly reshard?: boolean } = {}): Promise<MigrationReport> {
  let found = 0;
  let written = 0;
  let reread = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: `attribute_exists(queuePk) OR attribute_exists(outboxPk) OR attribute_exists(gsi2pk)${options.reshard ? ' OR attribute_exists(workPk) OR attribute_exists(sendPk) OR attribute_exists(searchPk)' : ''}`,
        ExclusiveStartKey: start,
      }),
    );
    for (const first of page.Items ?? []) {
      let change = migratedKeys(first, shards);
      if (!change) continue;
      found++;
      let item: Record<string, unknown> | undefined = first;
      for (let i = 0; i < TRIES && item && change; i++) {
        const names: Record<string, string> = {};
        const values: Record<string, unknown> = {};
        const n = (a: string) => ((names[`#${a}`] = a), `#${a}`);
        const v = (x: unknown) => ((values[`:v${Object.keys(values).length}`] = x), `:v${Object.keys(values).length - 1}`);
        const sets = Object.entries(change.set).map(([a, x]) => `${n(a)} = ${v(x)}`);
        const conditions = ['attribute_exists(pk)', ...Object.entries(change.unchanged).map(([a, x]) => `${n(a)} = ${v(x)}`)];
        try {
          await db.send(
            new UpdateCommand({
              TableName: tableName,
              Key: { pk: item.pk, sk: item.sk },
              UpdateExpression: [sets.length ? `SET ${sets.join(', ')}` : '', change.remove.length ? `REMOVE ${change.remove.map(n).join(', ')}` : ''].filter(Boolean).join(' '),
              ConditionExpression: conditions.join(' AND '),
              ExpressionAttributeNames: names,
              ExpressionAttributeValues: values,
            }),
          );
          written++;
          break;
        } catch (e) {
          if (!isConditionFailure(e)) throw e;
          reread++;
          item = (await db.send(new GetCommand({ TableName: tableName, Key: { pk: item.pk, sk: item.sk }, ConsistentRead: true }))).Item;
          change = item && migratedKeys(item, shards);
        }
      }
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return { found, written, reread };
}

export const describeMigration = (r: MigrationReport): string | undefined =>
  r.written ? `index migration: ${r.written} item${r.written === 1 ? '' : 's'} given the sharded index keys${r.reread ? ` (${r.reread} read again after a concurrent change)` : ''}` : undefined;
