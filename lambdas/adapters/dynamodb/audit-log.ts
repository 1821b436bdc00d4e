import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AuditEntry, AuditLog } from '../../ports/operators';
import { key, withoutStorageAttributes } from './keys';
import { decodeCursor, encodeCursor } from './cursor';
import { isConditionFailure, lookupItems, partitionItems } from './client';
import { GENESIS, LINK_LOOKBACK_DAYS, entryHash } from '../../domain/audit-chain';
import { retry, type RetryPolicy } from '../../domain/retry-policy';
import { realSleep } from '../../ports/clock';

const DAY_MS = 24 * 3600_000;
/** Entries sort by their place in the day's chain: SEQ#0000000001, … */
const SEQ_PREFIX = 'SEQ#';
const seqKey = (seq: number) => `${SEQ_PREFIX}${String(seq).padStart(10, '0')}`;
/**
 * Concurrent operators append at once rarely; each lost slot costs one read and one write. 50 tries,
 * pauses below 20, 40, … 320 ms (the one retry policy, domain/retry-policy.ts): ~15 s at the very most.
 */
const APPEND_RETRY: RetryPolicy = { tries: 50, firstDelayMs: 20, maxDelayMs: 320, jitter: 'full' };
/** Marks an entry id as written (beside the day's chain, not in it). */
const auditIdKey = (id: string) => ({ pk: `AUDITID#${id}`, sk: 'AUDITID' });
/** Days whose previous head one instance remembers (today's, and yesterday's around midnight). */
const REMEMBERED_DAYS = 4;
/** Earlier days read at once while looking for the previous day with entries. */
const LOOKBACK_BATCH = 16;

/** A day's first entry's link to the previous day's head (domain/audit-chain.ts). */
type DayLink = { prevDay: string; prevSeq: number; prevHash: string };

/**
 * The audit log: one item per entry under its day, written once (a conditional put), never updated.
 * The same item is indexed by its target, for a payment's or merchant's own history.
 */
export class DynamoAuditLog implements AuditLog {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /**
   * Appends to the day's chain: reads the last entry, writes entry n+1 linked to it with a condition
   * that slot n+1 is free. A writer that lost the slot to another reads again and links to that
   * one, so concurrent appends serialize into one chain and never overwrite an entry. A day's first
   * entry links to the previous day's head (domain/audit-chain.ts), so the days form one chain.
   */
  async append(entry: AuditEntry): Promise<void> {
    const day = entry.at.slice(0, 10);
    const { seq: _s, prevHash: _p, hash: _h, ...content } = entry;
    // An entry id is written once: a second append of it (a forged copy, a retry) is refused.
    const seen = await this.db.send(new GetCommand({ TableName: this.tableName, Key: auditIdKey(entry.id), ConsistentRead: true }));
    if (seen.Item) throw Object.assign(new Error(`audit entry ${entry.id} exists`), { name: 'ConditionalCheckFailedException' });
    let previousDay: DayLink | null | undefined;
    // A slot lost to another writer (its condition failed) is tried again after a pause; any other error is the answer.
    const appended = await retry(APPEND_RETRY, { sleep: realSleep, random: Math.random, retryable: isConditionFailure }, async () => {
      const last = await this.head(day);
      const seq = (last?.seq ?? 0) + 1;
      // Looked up once per append: the earlier days are closed, so their heads do not move.
      if (!last && previousDay === undefined) previousDay = (await this.previousHead(day)) ?? null;
      const link = last ? { prevHash: last.hash ?? GENESIS } : previousDay ? previousDay : { prevHash: GENESIS };
      const chained = { ...content, seq, ...link };
      const hash = entryHash(chained);
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...key.audit(day, seqKey(seq)), kind: 'audit', ...chained, hash, gsi1pk: key.auditOf(entry.target), gsi1sk: `${entry.at}#${entry.id}` },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      await this.db
        .send(new PutCommand({ TableName: this.tableName, Item: { ...auditIdKey(entry.id), kind: 'audit-id', day, seq }, ConditionExpression: 'attribute_not_exists(pk)' }))
        .catch((e: unknown) => {
          if (!isConditionFailure(e)) throw e;
        });
      return true;
    });
    if (appended.exhausted) throw new Error(`audit: could not append to the chain of ${day}`);
  }

  /**
   * The head of the latest day with entries before `day`, looking back LINK_LOOKBACK_DAYS days at
   * most, LOOKBACK_BATCH days at a time. Looked up once per day by this instance: concurrent first
   * appends of a day share one lookup.
   */
  private previousHead(day: string): Promise<DayLink | undefined> {
    let found = this.previousHeads.get(day);
    if (!found) {
      if (this.previousHeads.size >= REMEMBERED_DAYS) this.previousHeads.clear();
      found = this.lookBack(day);
      this.previousHeads.set(day, found);
      found.catch(() => this.previousHeads.delete(day));
    }
    return found;
  }

  private readonly previousHeads = new Map<string, Promise<DayLink | undefined>>();

  private async lookBack(day: string): Promise<DayLink | undefined> {
    const start = Date.parse(`${day}T00:00:00Z`);
    for (let back = 1; back <= LINK_LOOKBACK_DAYS; back += LOOKBACK_BATCH) {
      const days = Array.from({ length: Math.min(LOOKBACK_BATCH, LINK_LOOKBACK_DAYS - back + 1) }, (_, i) => new Date(start - (back + i) * DAY_MS).toISOString().slice(0, 10));
      const heads = await Promise.all(days.map((d) => this.head(d)));
      const i = heads.findIndex((h) => h?.seq !== undefined && h.hash !== undefined);
      if (i >= 0) return { prevDay: days[i]!, prevSeq: heads[i]!.seq!, prevHash: heads[i]!.hash! };
    }
    return undefined;
  }

  async head(day: string): Promise<AuditEntry | undefined> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :seq)',
        ExpressionAttributeValues: { ':pk': key.audit(day, '').pk, ':seq': SEQ_PREFIX },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const item = out.Items?.[0];
    return item ? withoutStorageAttributes<AuditEntry>(item) : undefined;
  }

  async day(day: string): Promise<AuditEntry[]> {
    return (await partitionItems(this.db, this.tableName, key.audit(day, '').pk)).map((i) => withoutStorageAttributes<AuditEntry>(i));
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
      // Chain order is append order; shown newest first by time (clocks of concurrent writers may differ by a little).
      const fetched = (out.Items ?? []).map((i) => withoutStorageAttributes<AuditEntry>(i));
      entries.push(...fetched.sort((a, b) => (a.at === b.at ? (b.seq ?? 0) - (a.seq ?? 0) : a.at < b.at ? 1 : -1)));
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
    const { items } = await lookupItems(this.db, this.tableName, key.auditOf(target), { limit, newestFirst: true });
    return items.map((i) => withoutStorageAttributes<AuditEntry>(i));
  }
}
