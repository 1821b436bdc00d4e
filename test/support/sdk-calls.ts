/**
 * Records every request an AWS SDK client sends, retries included (the middleware sits inside the
 * retry loop), by command name.
 */
export interface CallLog {
  readonly calls: string[];
  reset(): void;
}

type Next = (args: unknown) => Promise<unknown>;
interface Stack {
  add(
    middleware: (next: Next, context: { commandName?: string }) => Next,
    options: { step: 'finalizeRequest'; priority: 'low'; name: string },
  ): void;
}

/** Works on any v3 client; a DynamoDB document client shares the stack of the client it wraps. */
export function recordCalls(client: { middlewareStack: unknown }, name: string): CallLog {
  const calls: string[] = [];
  (client.middlewareStack as Stack).add(
    (next, context) => async (args) => {
      calls.push(String(context.commandName));
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: `record-calls-${name}` },
  );
  return { calls, reset: () => void calls.splice(0) };
}
