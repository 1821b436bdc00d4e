import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

/** The Lambda context a local invocation gets: the function's name, memory and deadline. */
export function lambdaContext(functionId: string, timeoutSeconds: number, memoryMb = 256): Context {
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `local-${functionId}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:local-${functionId}`,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/local-${functionId}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
