import { BatchGetCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CardToken, RecurringChain, TokenVault } from '../../ports/tokens';
import { key, withoutStorageAttributes } from './keys';

/** Card tokens and recurring chains: one item each, written once, never overwritten. */
export class DynamoTokenVault implements TokenVault {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async saveCardToken(token: CardToken): Promise<void> {
    await this.putOnce({ ...key.cardToken(token.token), kind: 'card-token', ...token });
  }

  async findCardToken(token: string): Promise<CardToken | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.cardToken(token) }));
    return out.Item ? withoutStorageAttributes<CardToken>(out.Item) : undefined;
  }

  async findCardTokens(tokens: readonly string[]): Promise<CardToken[]> {
    const unique = [...new Set(tokens)].slice(0, 100);
    if (!unique.length) return [];
    const out = await this.db.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: unique.map((t) => key.cardToken(t)) } } }));
    const items = out.Responses?.[this.tableName] ?? [];
    // Unprocessed keys are fetched one by one: a short list, bounded above.
    const missing = (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as { pk: string }[];
    const rest = await Promise.all(missing.map((k) => this.findCardToken(k.pk.replace(/^CARDTOKEN#/, ''))));
    return [...items.map((i) => withoutStorageAttributes<CardToken>(i)), ...rest.filter((t): t is CardToken => t !== undefined)];
  }

  async saveRecurringChain(chain: RecurringChain): Promise<void> {
    await this.putOnce({ ...key.recurringChain(chain.token), kind: 'recurring-chain', ...chain });
  }

  async findRecurringChain(token: string): Promise<RecurringChain | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.recurringChain(token), ConsistentRead: true }));
    return out.Item ? withoutStorageAttributes<RecurringChain>(out.Item) : undefined;
  }

  private async putOnce(item: Record<string, unknown>): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
  }
}
