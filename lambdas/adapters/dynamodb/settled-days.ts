import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DayFigure, SettledDays } from '../../ports/disputes';
import { partitionItems } from './client';
import { key } from './keys';

/**
 * A merchant's kept day (`SETTLEDDAY#<merchant>#<month>`, sort key the day): one partition per
 * merchant and month, so a month's kept days are one query. Merchant keys hold no #.
 */
export const settledDayKey = key.settledDay;

/** One item per merchant and closed day: its figure, written whole (a put), replaced when counted again. */
export class DynamoSettledDays implements SettledDays {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async ofMonth(merchantKey: string, month: string): Promise<ReadonlyMap<string, DayFigure>> {
    const items = await partitionItems(this.db, this.tableName, settledDayKey(merchantKey, `${month}-01`).pk);
    return new Map(
      items.map((i) => [
        String(i.sk),
        {
          settledCount: Number(i.settledCount ?? 0),
          settledMinor: Object.fromEntries(Object.entries((i.settledMinor ?? {}) as Record<string, unknown>).map(([c, v]) => [c, Number(v)])),
          open: ((i.open ?? []) as unknown[]).map(String),
        },
      ]),
    );
  }

  async keep(merchantKey: string, day: string, figure: DayFigure): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...settledDayKey(merchantKey, day), kind: 'settledDay', merchantKey, settledCount: figure.settledCount, settledMinor: { ...figure.settledMinor }, open: [...figure.open] },
      }),
    );
  }
}
