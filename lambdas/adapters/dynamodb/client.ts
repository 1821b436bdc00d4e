import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface DynamoOptions {
  readonly endpoint?: string;
}

/** A conditional write whose condition did not hold (the answer every guarded write expects). */
export const isConditionFailure = (e: unknown): boolean => (e as Error).name === 'ConditionalCheckFailedException';

/** One document client per process; undefined attributes are dropped, never written as null. */
export function createDocumentClient(options: DynamoOptions = {}): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    maxAttempts: 3,
    ...(options.endpoint
      ? { endpoint: options.endpoint, region: process.env.AWS_REGION ?? 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  });
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
}
