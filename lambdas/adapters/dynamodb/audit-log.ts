import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AuditEntry, AuditLog } from '../../ports/operators';
import { key, withoutStorageAttributes } from './keys';
import { decodeCursor, encodeCursor } from './cursor';
import { isConditionFailure, lookupItems, partitionItems } from './client';
import { GENESIS, LINK_LOOKBACK_DAYS, entryHash } from '../../domain/audit-chain';
import { retry, type RetryPolicy } from '../../domain/retry-policy';
import { realSleep } from '../../ports/clock';
import { randomUUID } from 'node:crypto';

const DAY_MS = 24 * 3600_000;
/** Entries sort by their place in the day's chain: SEQ#0000000001, … */
const SEQ_PREFIX = 'SEQ#';
const seqKey = (seq: number) => `${SEQ_PREFIX}${String(seq).padStart(10, '0')}`;
/**
 * Concurrent operators append at once rarely; each lost slot costs one read and one write. 50 tries,
 * pauses below 20, 40, … 320 ms (the one retry policy, domain/retry-policy.ts): ~15 s at the very most.
 */
const APPEND_RETRY: RetryPolicy = { tries: 50, firstDelayMs: 20, maxDelayMs: 320, jitter: 'full' };
/**
 * An entry id's record beside the day's chains (not in one): claimed before the entry is appended,
 * then marked with the day and place it took. Only ever put with a condition: the table's grants
 * allow no update of it (lib/table-access.ts).
 */
const auditIdKey = (id: string) => ({ pk: `AUDITID#${id}`, sk: 'AUDITID' });
/**
 * How long a claim of an id holds before another writer may take it over: far beyond one append
 * (APPEND_RETRY gives up within ~15 s), so only a writer that died mid-append leaves one to expire.
 * A writer stops trying to append once less than CLAIM_MARGIN_MS of its claim is left.
 */
export const AUDIT_CLAIM_MS = 120_000;
const CLAIM_MARGIN_MS = 30_000;
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
    /** The clock of the id claims (tests move it past a claim's end). */
    private readonly now: () => number = Date.now,
    private readonly newToken: () => string = randomUUID,
  ) {}

  /**
   * Appends to the day's chain: reads the last entry, writes entry n+1 linked to it with a condition
   * that slot n+1 is free. A writer that lost the slot to another reads again and links to that
   * one, so concurrent appends serialize into one chain and never overwrite an entry. A day's first
   * entry links to the previous day's head (domain/audit-chain.ts), so the days form one chain.
   *
   * An entry id is appended once. The id is claimed first (a conditional put), the entry appended,
   * then the id marked with its day and place: a second append of the id (a retry, a forged copy,
   * two importers at once) is refused with ConditionalCheckFailedException. A writer that died
   * between the claim and the mark leaves a claim that expires; the next append of the id looks for
   * it in the claimed day's chain and marks it, or takes the claim over and appends it.
   */
  async append(entry: AuditEntry): Promise<void> {
    const day = entry.at.slice(0, 10);
    const { seq: _s, prevHash: _p, hash: _h, ...content } = entry;
    const claim = await this.claim(entry.id, day);
    let previousDay: DayLink | null | undefined;
    let place: { seq: number } | undefined;
    // A slot lost to another writer (its condition failed) is tried again after a pause; any other error is the answer.
    const appended = await retry(APPEND_RETRY, { sleep: realSleep, random: Math.random, retryable: isConditionFailure }, async () => {
      const last = await this.head(day);
      // The entry is the head already: this append's own put, whose answer was lost (the SDK tried again and lost the slot to it).
      if (last?.id === entry.id && last.seq !== undefined) {
        place = { seq: last.seq };
        return true;
      }
      const seq = (last?.seq ?? 0) + 1;
      // Looked up once per append: the earlier days are closed, so their heads do not move.
      if (!last && previousDay === undefined) previousDay = (await this.previousHead(day)) ?? null;
      const link = last ? { prevHash: last.hash ?? GENESIS } : previousDay ? previousDay : { prevHash: GENESIS };
      const chained = { ...content, seq, ...link };
      const hash = entryHash(chained);
      // Past the claim's end another writer may have taken the id over: appending now could write it twice.
      if (this.now() > claim.until - CLAIM_MARGIN_MS) throw new Error(`audit: the claim of entry ${entry.id} ran out before it was appended`);
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...key.audit(day, seqKey(seq)), kind: 'audit', ...chained, hash, gsi1pk: key.auditOf(entry.target), gsi1sk: `${entry.at}#${entry.id}` },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      place = { seq };
      return true;
    });
    if (appended.exhausted || !place) throw new Error(`audit: could not append to the chain of ${day}`);
    await this.mark(entry.id, day, place.seq, claim.token);
  }

  /**
   * Claims an entry id for this append: a fresh id is claimed by one conditional put; an id appended
   * or being appended is refused; a claim left by a writer that died is settled (below).
   */
  private async claim(id: string, day: string): Promise<{ token: string; until: number }> {
    const token = this.newToken();
    const until = this.now() + AUDIT_CLAIM_MS;
    const claimed = { ...auditIdKey(id), kind: 'audit-id', day, claimToken: token, claimedUntil: until };
    try {
      await this.db.send(new PutCommand({ TableName: this.tableName, Item: claimed, ConditionExpression: 'attribute_not_exists(pk)' }));
      return { token, until };
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
    const seen = (await this.db.send(new GetCommand({ TableName: this.tableName, Key: auditIdKey(id), ConsistentRead: true }))).Item;
    const exists = () => Object.assign(new Error(`audit entry ${id} exists`), { name: 'ConditionalCheckFailedException' });
    // This put's own claim: its answer was lost and the SDK's next try found it.
    if (seen?.claimToken === token && seen.seq === undefined) return { token, until };
    // Appended; or being appended by a live writer (its claim has not run out), which finishes it.
    if (!seen || seen.seq !== undefined || typeof seen.claimedUntil !== 'number' || seen.claimedUntil > this.now()) throw exists();
    // The claim ran out: its writer died before it marked the id. Did the entry reach the chain?
    const claimedDay = String(seen.day);
    const found = await this.findInChain(claimedDay, id);
    if (found !== undefined) {
      await this.mark(id, claimedDay, found, String(seen.claimToken)).catch((e: unknown) => {
        if (!isConditionFailure(e)) throw e;
      });
      throw exists();
    }
    // It did not: take the claim over (one writer wins it) and append.
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: claimed,
          ConditionExpression: 'attribute_not_exists(seq) AND claimToken = :old',
          ExpressionAttributeValues: { ':old': seen.claimToken },
        }),
      );
    } catch (e) {
      if (isConditionFailure(e)) throw exists();
      throw e;
    }
    return { token, until };
  }

  /** Marks an id as appended at `seq` of `day`'s chain, if this writer's claim still holds it. */
  private async mark(id: string, day: string, seq: number, token: string): Promise<void> {
    await this.db
      .send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...auditIdKey(id), kind: 'audit-id', day, seq },
          ConditionExpression: 'attribute_not_exists(seq) AND claimToken = :token',
          ExpressionAttributeValues: { ':token': token },
        }),
      )
      .catch((e: unknown) => {
        // Another writer settled the same claim (it found this entry in the chain): nothing is lost.
        if (!isConditionFailure(e)) throw e;
      });
  }

  /** The place of entry `id` in `day`'s chain (a consistent read of the day), if it is there. */
  private async findInChain(day: string, id: string): Promise<number | undefined> {
    let exclusive: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :seq)',
          FilterExpression: '#id = :id',
          ProjectionExpression: '#seq',
          ExpressionAttributeNames: { '#id': 'id', '#seq': 'seq' },
          ExpressionAttributeValues: { ':pk': key.audit(day, '').pk, ':seq': SEQ_PREFIX, ':id': id },
          ConsistentRead: true,
          ExclusiveStartKey: exclusive,
        }),
      );
      const hit = out.Items?.[0];
      if (hit) return Number(hit.seq);
      exclusive = out.LastEvaluatedKey;
    } while (exclusive);
    return undefined;
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
