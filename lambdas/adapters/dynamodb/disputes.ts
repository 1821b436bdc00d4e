import { PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { disputeMonthOf, type DisputeEntry, type MonthTally } from '../../domain/dispute-rates';
import type { DisputeLog, SettlementTally } from '../../ports/disputes';
import { itemsByKey, partitionItems } from './client';
import { key } from './keys';

const ENTRY_FIELDS = ['transId', 'paymentId', 'merchantKey', 'amountMinor', 'currency', 'reasonCode', 'chargebackDate', 'bankDate', 'recordedAt', 'outcome', 'refusal'] as const;

/** The chargebacks of a month under one partition (`DISPUTE#<month>`), one item per chargeback. */
export class DynamoDisputeLog implements DisputeLog {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async record(entry: DisputeEntry): Promise<void> {
    const item = Object.fromEntries(ENTRY_FIELDS.filter((f) => entry[f] !== undefined).map((f) => [f, entry[f]]));
    // Keyed by the chargeback's transaction id in the month it counts in: written again, it is replaced.
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: { ...key.dispute(disputeMonthOf(entry), entry.transId), kind: 'dispute', ...item } }));
  }

  async ofMonth(month: string): Promise<DisputeEntry[]> {
    const items = await partitionItems(this.db, this.tableName, key.dispute(month, '').pk);
    return items.map((i) => Object.fromEntries(ENTRY_FIELDS.filter((f) => i[f] !== undefined).map((f) => [f, i[f]])) as unknown as DisputeEntry);
  }
}

/** Attribute of a tally that holds the settled minor units of one currency. */
const SETTLED_PREFIX = 'settled_';

/** One item per merchant and month (`TALLY#<merchant>#<month>`): a count and a sum per currency, added to atomically. */
export class DynamoSettlementTally implements SettlementTally {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async add(merchantKey: string, month: string, currency: string, amountMinor: number): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key.tally(merchantKey, month),
        UpdateExpression: 'SET merchantKey = :m, #month = :month ADD settledCount :one, #amount :amount',
        ExpressionAttributeNames: { '#month': 'month', '#amount': `${SETTLED_PREFIX}${currency}` },
        ExpressionAttributeValues: { ':m': merchantKey, ':month': month, ':one': 1, ':amount': amountMinor },
      }),
    );
  }

  async ofMonth(month: string, merchantKeys: readonly string[]): Promise<MonthTally[]> {
    const items = await itemsByKey(this.db, this.tableName, merchantKeys.map((m) => key.tally(m, month)), false);
    return items.map((i) => ({
      merchantKey: String(i.merchantKey),
      month,
      settledCount: Number(i.settledCount ?? 0),
      settledMinor: Object.fromEntries(Object.entries(i).filter(([k]) => k.startsWith(SETTLED_PREFIX)).map(([k, v]) => [k.slice(SETTLED_PREFIX.length), Number(v)])),
    }));
  }
}
