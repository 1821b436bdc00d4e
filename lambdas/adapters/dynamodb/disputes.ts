import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { disputeMonthOf, type DisputeEntry } from '../../domain/dispute-rates';
import type { DisputeLog } from '../../ports/disputes';
import { partitionItems } from './client';
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
