import { openCursor, sealCursor } from '../../adapters/dynamodb/cursor';
import { invalidRequest, type ApiError } from '../../domain/errors';

/**
 * The portal's cursors: sealed (HMAC), so a count's running total, a search's position and the
 * audit log's own cursor come back as we wrote them. One we did not make (or that was changed) is
 * refused with a 400, never read and never a 500.
 */

/** Where a search stands: the day (0 = the newest), the merchant, and the index page within them. */
export interface Position {
  readonly day: number;
  readonly merchant: number;
  readonly page?: string;
}
export const START: Position = { day: 0, merchant: 0 };

export const badCursor = (): ApiError => invalidRequest([{ path: 'cursor', message: 'This value is not valid.' }]);

export const cursorOf = (position: Position & { counted?: number }): string => sealCursor(position);

/** Where a search resumes. */
export function searchPosition(cursor: string): Position {
  return positionFrom(cursorFields(cursor));
}

/** A count's cursor: a search position and what was counted before it. */
export function countPosition(cursor: string): Position & { counted: number } {
  const fields = cursorFields(cursor);
  const position = positionFrom(fields);
  const { counted } = fields;
  if (!Number.isSafeInteger(counted) || (counted as number) < 0) throw badCursor();
  return { ...position, counted: counted as number };
}

/** The audit log's own cursor, travelling sealed. */
export const auditCursorOf = (cursor: string): string => sealCursor({ audit: cursor });

export function auditCursorFrom(sealed: string): string {
  const { audit } = cursorFields(sealed);
  if (typeof audit !== 'string') throw badCursor();
  return audit;
}

function positionFrom({ day, merchant, page }: Record<string, unknown>): Position {
  const index = (n: unknown) => Number.isInteger(n) && (n as number) >= 0;
  if (!index(day) || !index(merchant) || (page !== undefined && typeof page !== 'string')) throw badCursor();
  return { day: day as number, merchant: merchant as number, ...(page !== undefined ? { page: page as string } : {}) };
}

function cursorFields(cursor: string): Record<string, unknown> {
  try {
    return openCursor(cursor) as Record<string, unknown>;
  } catch {
    throw badCursor();
  }
}

/** A read resuming from a tampered cursor fails in the store (bad JSON, a bad date, a key of another shape): refused. */
export async function refusingBadCursor<T>(cursor: string | undefined, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (cursor !== undefined && (e instanceof SyntaxError || e instanceof RangeError || (e as Error).name === 'ValidationException')) throw badCursor();
    throw e;
  }
}
