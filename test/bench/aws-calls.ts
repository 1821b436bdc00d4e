import { decodeLinkToken } from '../../lambdas/domain/checkout-link';
import type { Deps } from '../../lambdas/container';
import { expectStatus, postJson } from './http-client';
import { createSessionBody, paymentStatusBody, type MerchantCredentials } from './requests';

export type AwsService = 'DynamoDB' | 'SecretsManager';

type Next = (args: unknown) => Promise<unknown>;
/** Every SDK client's stack accepts an initialize-step middleware; its overloads defeat a structural type. */
type AddInitializeMiddleware = (
  middleware: (next: Next, context: { commandName?: string }) => Next,
  options: { step: 'initialize'; name: string },
) => void;

/** Counts the SDK commands a client sends (not HTTP attempts: a retried call counts once). */
export class AwsCallCounter {
  private readonly calls = new Map<string, number>();

  attach(client: { readonly middlewareStack: { add(...args: never[]): void } }, service: AwsService): void {
    const add = client.middlewareStack.add.bind(client.middlewareStack) as unknown as AddInitializeMiddleware;
    add(
      (next, context) => async (args) => {
        const key = `${service} ${context.commandName ?? 'unknown command'}`;
        this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
        return next(args);
      },
      { step: 'initialize', name: `benchCallCounter${service}` },
    );
  }

  reset(): void {
    this.calls.clear();
  }

  snapshot(): AwsCalls {
    const byCommand = Object.fromEntries([...this.calls].sort());
    const total = (service: AwsService) => [...this.calls].filter(([k]) => k.startsWith(`${service} `)).reduce((n, [, v]) => n + v, 0);
    return { dynamodb: total('DynamoDB'), secretsManager: total('SecretsManager'), byCommand };
  }
}

export interface AwsCalls {
  readonly dynamodb: number;
  readonly secretsManager: number;
  /** "DynamoDB PutCommand" → 1 */
  readonly byCommand: Readonly<Record<string, number>>;
}

/** The running service the operations talk to. */
export interface BenchService {
  readonly baseUrl: string;
  readonly deps: Deps;
  /** A merchant no request has used yet, so its password is not in the secret cache. */
  newMerchant(): Promise<MerchantCredentials>;
}

/** State one operation leaves for the next (a status check reads the session made before it). */
export interface OperationContext {
  readonly service: BenchService;
  merchant?: MerchantCredentials;
  lastSession?: { readonly paymentId: string; readonly orderNumber: string };
}

export interface Operation {
  readonly name: string;
  /** Set-up that is not counted, e.g. a fresh merchant for a cold secret cache. */
  readonly prepare?: (ctx: OperationContext) => Promise<void>;
  /** Exactly one request to the service; throws if the service did not do the job. */
  readonly perform: (ctx: OperationContext) => Promise<void>;
  readonly target?: { readonly dynamodb: number; readonly secretsManager: number };
}

const WARM = { dynamodb: 1, secretsManager: 0 } as const;
let orderSeq = 0;

const merchantOf = (ctx: OperationContext): MerchantCredentials => {
  if (!ctx.merchant) throw new Error('no merchant yet: an earlier operation must create one');
  return ctx.merchant;
};
const sessionOf = (ctx: OperationContext) => {
  if (!ctx.lastSession) throw new Error('no session yet: a create-session operation must come first');
  return ctx.lastSession;
};

async function createSession(ctx: OperationContext): Promise<void> {
  const orderNumber = `bench-calls-${process.pid}-${++orderSeq}`;
  const res = await postJson(ctx.service.baseUrl, '/api/v1/session', createSessionBody(merchantOf(ctx), orderNumber));
  expectStatus('create-session', res);
  const redirect = (res.json as { redirect_url?: string }).redirect_url ?? '';
  const decoded = decodeLinkToken(redirect.slice(redirect.lastIndexOf('/') + 1));
  if (!decoded) throw new Error(`create-session: unexpected redirect_url ${redirect}`);
  ctx.lastSession = { paymentId: decoded.paymentId, orderNumber };
}

async function status(ctx: OperationContext, by: 'payment_id' | 'order_id'): Promise<void> {
  const session = sessionOf(ctx);
  const body = paymentStatusBody(merchantOf(ctx), by === 'payment_id' ? { payment_id: session.paymentId } : { order_id: session.orderNumber });
  const res = await postJson(ctx.service.baseUrl, '/api/v1/payment/status', body);
  expectStatus(`status by ${by}`, res);
  if ((res.json as { payment_id?: string }).payment_id !== session.paymentId) throw new Error(`status by ${by} answered another payment: ${res.text}`);
}

/**
 * The operations whose AWS calls are counted, in order. Append an entry to cover a new
 * operation (pay, void, recurring, refund, capture): its `perform` makes one request.
 */
export const OPERATIONS: readonly Operation[] = [
  {
    name: 'create-session, cold secret cache',
    prepare: async (ctx) => {
      ctx.merchant = await ctx.service.newMerchant();
    },
    perform: createSession,
  },
  { name: 'create-session, warm secret cache', perform: createSession, target: WARM },
  { name: 'status by payment_id', perform: (ctx) => status(ctx, 'payment_id'), target: WARM },
  { name: 'status by order_id', perform: (ctx) => status(ctx, 'order_id'), target: WARM },
];

export interface OperationCalls {
  readonly operation: Operation;
  readonly calls: AwsCalls;
  /** Undefined when the operation has no target. */
  readonly pass?: boolean;
}

export async function countAwsCalls(operations: readonly Operation[], service: BenchService, counter: AwsCallCounter): Promise<OperationCalls[]> {
  const ctx: OperationContext = { service };
  const results: OperationCalls[] = [];
  for (const operation of operations) {
    await operation.prepare?.(ctx);
    counter.reset();
    await operation.perform(ctx);
    const calls = counter.snapshot();
    const t = operation.target;
    results.push({ operation, calls, ...(t ? { pass: calls.dynamodb === t.dynamodb && calls.secretsManager === t.secretsManager } : {}) });
  }
  return results;
}
