// Runs in a fresh Node process without the TypeScript loader, as a Lambda sandbox would: imports
// one bundled handler and invokes it once with the event the parent sends.
import { pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';

const context = (name) => {
  const deadline = Date.now() + 10_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
};

process.once('message', async ({ bundle, name, event }) => {
  const started = performance.now();
  try {
    const { handler } = await import(pathToFileURL(bundle).href);
    const imported = performance.now();
    const result = await handler(event, context(name));
    const invokeMs = performance.now() - imported;
    process.send({ ok: true, result, importMs: imported - started, invokeMs }, () => process.exit(0));
  } catch (e) {
    process.send({ ok: false, error: String(e?.stack ?? e) }, () => process.exit(1));
  }
});
