/**
 * Opaque page cursors: whatever the store needs to resume a query, as base64url JSON. A cursor that
 * is not one of ours fails to decode (SyntaxError) or names a key the query refuses
 * (ValidationException); callers turn either into a 400.
 */
export const encodeCursor = (position: unknown): string => Buffer.from(JSON.stringify(position)).toString('base64url');

export const decodeCursor = <T = Record<string, unknown>>(cursor: string): T => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as T;
