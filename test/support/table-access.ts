import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { CALLBACK_DISPATCHER, JOBS, RECEIPT_FEEDBACK } from '../../lib/jobs';
import { canonicalPath, FALLBACK_ROUTE, ROUTES, type RouteDefinition } from '../../lib/routes';
import { tablePolicy, type TableAccess } from '../../lib/table-access';
import { ITEM_KINDS } from '../../lib/table-schema';
import { evaluate, type Decision } from './iam-policy';

/**
 * What each Lambda really asks of DynamoDB, checked against what its declaration grants.
 *
 * Every request the SDK client sends is recorded with the function it runs for — the route whose
 * request the test service is handling (found as the local runner finds it), or the job or stream
 * function a test runs with `asFunction` — as one IAM request per item it names: the action, the
 * table or index, and the partition keys (`dynamodb:LeadingKeys`). Each is evaluated against the
 * IAM statements the stack makes of that function's declaration (lib/table-access.ts tablePolicy),
 * so a call the deployed function would be refused fails the test that made it. Calls outside any
 * function (fixtures, use cases called directly, the merchant CLI) are not checked.
 */

/** The function ids whose declaration is known: route ids, the fallback's, job ids, and the stream dispatcher. */
export const CALLBACK_DISPATCHER_ID = 'CallbacksDispatcher';
/** The function SES's bounces and complaints reach (lib/constructs/receipt-mail.ts). */
export const RECEIPT_FEEDBACK_ID = 'ReceiptFeedback';

export function declaredAccess(functionId: string): TableAccess | undefined {
  if (functionId === CALLBACK_DISPATCHER_ID) return CALLBACK_DISPATCHER.access.table;
  if (functionId === RECEIPT_FEEDBACK_ID) return RECEIPT_FEEDBACK.access.table;
  if (functionId === FALLBACK_ROUTE.id) return FALLBACK_ROUTE.access.table;
  return (ROUTES.find((r) => r.id === functionId) ?? JOBS.find((j) => j.id === functionId))?.access.table;
}

export interface TableCall {
  readonly fn: string;
  /** The IAM action, e.g. `PutItem`. */
  readonly action: string;
  /** The partition keys it names, when on the table. */
  readonly leadingKeys?: readonly string[];
  readonly index?: string;
}

export interface CheckedCall extends TableCall {
  readonly decision: Decision;
}

const current = new AsyncLocalStorage<string>();

/** Runs `run` as the function `id` would: the table calls it makes are checked against that function's grant. */
export const asFunction = <T>(id: string, run: () => T): T => current.run(id, run);

const TABLE = 'arn:table';

/** The partition key of one marshalled or plain key or item. */
const pkOf = (item: Record<string, unknown> | undefined): string | undefined => {
  const v = item?.pk as unknown;
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { S?: unknown }).S === 'string') return (v as { S: string }).S;
  return undefined;
};

const attributeValue = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : v && typeof v === 'object' && typeof (v as { S?: unknown }).S === 'string' ? (v as { S: string }).S : undefined;

type Input = Record<string, any>;

/** The partition key a table Query names in its key condition (`pk = :v`, or `#n = :v` with #n → pk). */
function queriedPartition(input: Input): string | undefined {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  for (const m of String(input.KeyConditionExpression ?? '').matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    const name = m[1]!.startsWith('#') ? names[m[1]!] : m[1];
    if (name === 'pk') return attributeValue(input.ExpressionAttributeValues?.[m[2]!]);
  }
  return undefined;
}

/** One IAM request per item a command names (a transaction's items are authorized one by one). */
export function callsOf(fn: string, command: string, input: Input): TableCall[] {
  const action = command.replace(/Command$/, '');
  const table = (leadingKeys: (string | undefined)[], a = action): TableCall => ({ fn, action: a, leadingKeys: leadingKeys.map((k) => k ?? '<none>') });
  switch (action) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
      return [table([pkOf(input.Key)])];
    case 'PutItem':
      return [table([pkOf(input.Item)])];
    case 'Query':
      return input.IndexName ? [{ fn, action, index: String(input.IndexName) }] : [table([queriedPartition(input)])];
    case 'BatchGetItem':
      return Object.values(input.RequestItems ?? {}).map((r: any) => table((r.Keys ?? []).map(pkOf)));
    case 'BatchWriteItem':
      return Object.values(input.RequestItems ?? {}).map((writes: any) => table(writes.map((w: any) => pkOf(w.PutRequest?.Item ?? w.DeleteRequest?.Key))));
    case 'TransactWriteItems':
      return (input.TransactItems ?? []).map((t: any) => {
        const [kind, op] = Object.entries(t)[0] as [string, Input];
        const a = kind === 'Put' ? 'PutItem' : kind === 'Update' ? 'UpdateItem' : kind === 'Delete' ? 'DeleteItem' : 'ConditionCheckItem';
        return table([pkOf(op.Item ?? op.Key)], a);
      });
    case 'TransactGetItems':
      return (input.TransactItems ?? []).map((t: any) => table([pkOf(t.Get?.Key)], 'GetItem'));
    default:
      // Scan and anything else: no partition key, which no statement allows.
      return [{ fn, action, leadingKeys: [] }];
  }
}

/** What IAM would answer the deployed function `call.fn` for this call. */
export function decide(call: TableCall): Decision {
  const access = declaredAccess(call.fn);
  if (!access) throw new Error(`No table access is declared for function ${call.fn}`);
  const statements = tablePolicy(access, TABLE);
  return evaluate(statements, {
    action: `dynamodb:${call.action}`,
    resource: call.index ? `${TABLE}/index/${call.index}` : TABLE,
    context: call.index ? {} : { 'dynamodb:LeadingKeys': call.leadingKeys },
  });
}

/** A call as one line: `CheckoutPay UpdateItem PAYMENT#` or `AdminPayments Query index gsi2`. */
export function describe(call: TableCall): string {
  if (call.index) return `${call.fn} ${call.action} index ${call.index}`;
  const kinds = [...new Set((call.leadingKeys ?? []).map(kindOf))].sort();
  return `${call.fn} ${call.action} ${kinds.join(' ') || '(no partition key)'}`;
}

/** The item kind (partition key prefix) of a key, or the key itself when it has none. */
export const kindOf = (pk: string): string => Object.values(ITEM_KINDS).find((prefix) => pk.startsWith(prefix)) ?? `unknown:${pk}`;

export interface TableAccessRecorder {
  /** Every checked call so far, deduplicated by description. */
  observed(): CheckedCall[];
  /** The calls a deployed function would have been refused. */
  refused(): CheckedCall[];
  reset(): void;
}

type Step = { add(mw: (next: (args: { input: Input }) => Promise<unknown>, ctx: { commandName?: string }) => (args: { input: Input }) => Promise<unknown>, options: object): void };

/** Records every command `client` sends (once per command, before retries) with the function it runs for. */
export function recordTableAccess(client: { middlewareStack: unknown }): TableAccessRecorder {
  const seen = new Map<string, CheckedCall>();
  (client.middlewareStack as Step).add(
    (next, context) => async (args) => {
      const fn = current.getStore();
      if (fn !== undefined) {
        for (const call of callsOf(fn, String(context.commandName), args.input)) {
          const key = `${describe(call)} ${call.leadingKeys?.length ?? ''}`;
          if (!seen.has(key)) seen.set(key, { ...call, decision: decide(call) });
          else if (seen.get(key)!.decision === 'allowed') {
            const decision = decide(call);
            if (decision !== 'allowed') seen.set(key, { ...call, decision });
          }
        }
      }
      return next(args);
    },
    { step: 'serialize', priority: 'high', name: 'record-table-access' },
  );
  return {
    observed: () => [...seen.values()],
    refused: () => [...seen.values()].filter((c) => c.decision !== 'allowed'),
    reset: () => seen.clear(),
  };
}

/** The route the local runner would hand a request to (lib/routes.ts order; local/http-server.ts matching). */
export function routeFor(method: string | undefined, url: string | undefined): RouteDefinition | undefined {
  const path = canonicalPath(new URL(url ?? '/', 'http://localhost').pathname);
  return ROUTES.find((r) => {
    if (r.method !== method) return false;
    const pattern = r.path
      .split('/')
      .map((s) => (/^\{\w+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    return new RegExp(`^${pattern}$`).test(path);
  });
}

/** Handles each request of `server` as the function of its route, or as the fallback's when no route takes it. */
export function attributeRequests(server: Server): void {
  const listeners = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const route = routeFor(req.method, req.url);
    current.run(route?.id ?? FALLBACK_ROUTE.id, () => listeners.forEach((l) => l(req, res)));
  });
}

/** The message a test file fails with when a function used more than it is granted. */
export function refusalReport(refused: readonly CheckedCall[]): string {
  return [
    'DynamoDB calls the deployed functions would be refused (declare them in lib/routes.ts or lib/jobs.ts, see lib/table-access.ts):',
    ...refused.map((c) => `  ${describe(c)}${c.leadingKeys?.length ? ` [${c.leadingKeys.join(', ')}]` : ''}: ${c.decision}`),
  ].join('\n');
}
