import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, paginateQuery, PutCommand, QueryCommand, UpdateCommand, type PutCommandInput, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { traced } from '../../observability/telemetry';
import { boundedRequests, callTimeouts } from '../aws/request-timeouts';
import { LOOKUP_INDEX } from './keys';

export interface DynamoOptions {
  readonly endpoint?: string;
  /** One try's wait for its answer (AWS_CALL_TIMEOUT_MS); the connection's own is at most a second. */
  readonly callTimeoutMs?: number;
}


/** A conditional write whose condition did not hold (the answer every guarded write expects). */
export const isConditionFailure = (e: unknown): boolean => (e as Error).name === 'ConditionalCheckFailedException';

/** One conditional write: false when its condition did not hold, any other failure thrown. */
async function conditionally(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (e) {
    if (!isConditionFailure(e)) throw e;
    return false;
  }
}

export const conditionalUpdate = (db: DynamoDBDocumentClient, input: UpdateCommandInput & { readonly ConditionExpression: string }): Promise<boolean> =>
  conditionally(() => db.send(new UpdateCommand(input)));

/**
 * Puts a new item once (`attribute_not_exists(pk)`): 'written', or 'exists' when another item holds
 * its key. A put the table carried out whose answer was lost is tried again by the SDK and then
 * finds an item: when that item is exactly this one, the put was ours and it is 'written'.
 */
export async function putNew(db: DynamoDBDocumentClient, input: PutCommandInput & { readonly Item: Record<string, unknown> }): Promise<'written' | 'exists'> {
  try {
    await db.send(new PutCommand({ ...input, ConditionExpression: 'attribute_not_exists(pk)' }));
    return 'written';
  } catch (e) {
    if (!isConditionFailure(e)) throw e;
  }
  const found = await db.send(new GetCommand({ TableName: input.TableName, Key: { pk: input.Item.pk, sk: input.Item.sk }, ConsistentRead: true }));
  return found.Item && sameItem(found.Item, input.Item) ? 'written' : 'exists';
}

/** `putNew`, for a key no other item may hold: an item there already is an error. */
export async function createItem(db: DynamoDBDocumentClient, input: PutCommandInput & { readonly Item: Record<string, unknown> }): Promise<void> {
  if ((await putNew(db, input)) === 'exists') throw Object.assign(new Error(`an item ${String(input.Item.pk)} / ${String(input.Item.sk)} exists`), { name: 'ConditionalCheckFailedException' });
}

/** Whether two items hold the same attributes and values, as the table stores them (undefined dropped, sets unordered). */
export function sameItem(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const canonical = (item: Record<string, unknown>) => JSON.stringify(sorted(marshall(item, { removeUndefinedValues: true, convertClassInstanceToMap: false })));
  return canonical(a) === canonical(b);
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    // String, number and binary sets: the same members in any order.
    return Object.fromEntries(entries.map(([k, v]) => [k, (k === 'SS' || k === 'NS') && Array.isArray(v) ? [...(v as string[])].sort() : sorted(v)]));
  }
  return value;
}

export const conditionalPut = (db: DynamoDBDocumentClient, input: PutCommandInput & { readonly ConditionExpression: string }): Promise<boolean> =>
  conditionally(() => db.send(new PutCommand(input)));

/** One document client per process; undefined attributes are dropped, never written as null. */
export function createDocumentClient(options: DynamoOptions = {}): DynamoDBDocumentClient {
  // Every DynamoDB call a subsegment of the trace (on AWS; the tracer is off elsewhere).
  const client = traced(new DynamoDBClient({
    maxAttempts: 3,
    requestHandler: boundedRequests(callTimeouts(options.callTimeoutMs)),
    ...(options.endpoint
      ? { endpoint: options.endpoint, region: process.env.AWS_REGION ?? 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  }));
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
}

/**
 * The items of these keys (missing ones left out), in the keys' order: what a query of a keys-only
 * index is followed by. BatchGetItem takes 100 keys a call and may leave some unprocessed under
 * load; a bounded number of rounds picks them up.
 */
export async function itemsByKey(
  db: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly { readonly pk: string; readonly sk: string }[],
  consistent = true,
  attributes?: readonly string[],
): Promise<Record<string, unknown>[]> {
  const id = (k: { pk: unknown; sk: unknown }) => `${String(k.pk)}\u0000${String(k.sk)}`;
  const unique = [...new Map(keys.map((k) => [id(k), { pk: k.pk, sk: k.sk }])).values()];
  const found = new Map<string, Record<string, unknown>>();
  // Only these attributes when named (a smaller answer, the same read units), with the key the answers are matched by.
  const names = attributes?.length ? ['pk', 'sk', ...attributes] : [];
  const projection = names.length ? { ProjectionExpression: names.map((_, i) => `#a${i}`).join(', '), ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#a${i}`, n])) } : {};
  for (let i = 0; i < unique.length; i += 100) {
    let pending: Record<string, unknown>[] = unique.slice(i, i + 100);
    for (let round = 0; pending.length && round < 5; round++) {
      const out = await db.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: consistent, ...projection } } }));
      for (const item of out.Responses?.[tableName] ?? []) found.set(id(item as { pk: unknown; sk: unknown }), item);
      pending = (out.UnprocessedKeys?.[tableName]?.Keys ?? []) as Record<string, unknown>[];
    }
  }
  return keys.map((k) => found.get(id(k))).filter((i): i is Record<string, unknown> => i !== undefined);
}

/** Every item of one partition of the table, read consistently, page after page. */
export async function partitionItems(db: DynamoDBDocumentClient, tableName: string, pk: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  const pages = paginateQuery({ client: db }, { TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true });
  for await (const page of pages) items.push(...(page.Items ?? []));
  return items;
}

/**
 * One page of the lookup index under `pk`. The index holds keys only, so the items are read by key
 * after it (eventually consistent, as the index is); `after` continues where a page ended (`last`).
 */
export async function lookupItems(
  db: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
  page: { readonly limit: number; readonly newestFirst?: boolean; readonly after?: Record<string, unknown> },
): Promise<{ items: Record<string, unknown>[]; last?: Record<string, unknown> }> {
  const out = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: LOOKUP_INDEX,
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      Limit: page.limit,
      ...(page.newestFirst ? { ScanIndexForward: false } : {}),
      ...(page.after ? { ExclusiveStartKey: page.after } : {}),
    }),
  );
  const keys = (out.Items ?? []).map((i) => ({ pk: String(i.pk), sk: String(i.sk) }));
  return { items: await itemsByKey(db, tableName, keys, false), ...(out.LastEvaluatedKey ? { last: out.LastEvaluatedKey } : {}) };
}

/**
 * One page of a due index (sort keys `<ISO time>#…`): the entries of partition `pk` due by `until`,
 * soonest first; `after` continues where a page ended (`last`).
 */
export async function duePage(
  db: DynamoDBDocumentClient,
  tableName: string,
  index: { readonly name: string; readonly pk: string; readonly sk: string },
  pk: string,
  until: Date,
  page: { readonly limit: number; readonly after?: Record<string, unknown> },
): Promise<{ items: Record<string, unknown>[]; last?: Record<string, unknown> }> {
  const out = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: index.name,
      KeyConditionExpression: `${index.pk} = :pk AND ${index.sk} <= :until`,
      ExpressionAttributeValues: { ':pk': pk, ':until': `${until.toISOString()}#~` },
      Limit: page.limit,
      ...(page.after ? { ExclusiveStartKey: page.after } : {}),
    }),
  );
  return { items: out.Items ?? [], ...(out.LastEvaluatedKey ? { last: out.LastEvaluatedKey } : {}) };
}
