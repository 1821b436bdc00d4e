import { AsyncLocalStorage } from 'node:async_hooks';
import { decodeLinkToken } from '../../lambdas/domain/checkout-link';
import { setDeps } from '../../lambdas/container';
import type { Clock } from '../../lambdas/ports/clock';
import { localClock } from '../../local/clock';
import { insideVoidWindow } from '../support/void-window';
import { updateMerchantSettings } from '../../lambdas/use-cases/manage-merchants';
import type { HttpAnswer } from '../support/http';
import { captureOf, openSession, paidPayment, recurringChain, recurringOf, refundOf, retryOf, statusOf, submitPage, voidOf, type RecurringInput, type Session } from '../support/payments';
import type { TestService } from '../support/service';
import { startCallbackReceiver, type CallbackReceiver } from '../support/callback-receiver';
import { runCallbackJob, type CallbackJobReport } from '../../lambdas/use-cases/deliver-callbacks';
import { expectStatus, postJson } from './http-client';
import { createSessionBody, paymentStatusBody, type MerchantCredentials } from './requests';

export type AwsService = 'DynamoDB' | 'SecretsManager';
/** Whose call it is: the service's own code, or the sandbox acquirer's (a real acquirer would not use our table). */
export type CallSide = 'service' | 'acquirer';

export interface AwsCall {
  readonly side: CallSide;
  readonly service: AwsService;
  /** SDK command name, e.g. "UpdateItemCommand". */
  readonly command: string;
  readonly kind: 'read' | 'write' | 'other';
  /** A write with a ConditionExpression (or a condition check in a transaction). */
  readonly conditional: boolean;
}

type Next = (args: unknown) => Promise<unknown>;
/** Every SDK client's stack accepts an initialize-step middleware; its overloads defeat a structural type. */
type AddInitializeMiddleware = (
  middleware: (next: Next, context: { commandName?: string }) => Next,
  options: { step: 'initialize'; name: string },
) => void;

const READS = new Set(['GetItemCommand', 'BatchGetItemCommand', 'QueryCommand', 'ScanCommand', 'TransactGetItemsCommand']);
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);

type Input = Record<string, unknown> | undefined;

function isConditional(input: Input): boolean {
  if (typeof input?.ConditionExpression === 'string') return true;
  const items = Array.isArray(input?.TransactItems) ? (input.TransactItems as Record<string, Input>[]) : [];
  return items.some((item) => 'ConditionCheck' in item || Object.values(item).some((op) => typeof op?.ConditionExpression === 'string'));
}

/** The partition key a single-item command addresses, marshalled or not; undefined for queries and batches. */
function partitionKeyOf(input: Input): string | undefined {
  const pk = ((input?.Key ?? input?.Item) as Record<string, unknown> | undefined)?.pk;
  if (typeof pk === 'string') return pk;
  const s = (pk as { S?: unknown } | undefined)?.S;
  return typeof s === 'string' ? s : undefined;
}

/** The sandbox acquirer's records: SANDBOX#<idempotency key> and SANDBOX-CREDENTIAL#<ref>. */
const isAcquirerKey = (pk: string) => pk.startsWith('SANDBOX#') || pk.startsWith('SANDBOX-CREDENTIAL#');

/**
 * Counts the SDK commands a client sends (not HTTP attempts: a retried call counts once), and
 * whether each was made inside the acquirer: calls made while one of the acquirer's methods runs
 * are the acquirer's. The partition key each single-item command addresses cross-checks that.
 */
export class AwsCallCounter {
  private calls: AwsCall[] = [];
  private misattributed: string[] = [];
  private readonly scope = new AsyncLocalStorage<CallSide>();

  attach(client: { readonly middlewareStack: { add(...args: never[]): void } }, service: AwsService): void {
    const add = client.middlewareStack.add.bind(client.middlewareStack) as unknown as AddInitializeMiddleware;
    add(
      (next, context) => async (args) => {
        const command = context.commandName ?? 'unknown command';
        const input = (args as { input?: Input }).input;
        const side = this.scope.getStore() ?? 'service';
        const pk = service === 'DynamoDB' ? partitionKeyOf(input) : undefined;
        if (pk !== undefined && isAcquirerKey(pk) !== (side === 'acquirer')) this.misattributed.push(`${command} on ${pk.split('#')[0]}# counted as ${side}`);
        const kind = READS.has(command) ? 'read' : WRITES.has(command) ? 'write' : 'other';
        this.calls.push({ side, service, command, kind, conditional: kind === 'write' && isConditional(input) });
        return next(args);
      },
      { step: 'initialize', name: `benchCallCounter${service}` },
    );
  }

  /**
   * Wraps every method of an object of the acquirer's (the acquirer itself, the sandbox's challenge
   * pages) so the calls it makes are counted as its own. Its parts are named one by one, not found
   * by walking its fields: a field holding the shared DynamoDB client would count every call as the
   * acquirer's.
   */
  attributeToAcquirer(acquirer: object): void {
    const target = acquirer as Record<string, unknown>;
    const names = new Set<string>();
    for (let proto = Object.getPrototypeOf(acquirer) as object | null; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
      for (const name of Object.getOwnPropertyNames(proto)) if (name !== 'constructor' && typeof target[name] === 'function') names.add(name);
    }
    for (const name of names) {
      const original = target[name] as (...args: unknown[]) => unknown;
      Object.defineProperty(acquirer, name, {
        value: (...args: unknown[]) => this.scope.run('acquirer', () => original.apply(acquirer, args)),
        configurable: true,
        writable: true,
      });
    }
  }

  reset(): void {
    this.calls = [];
    this.misattributed = [];
  }

  snapshot(): AwsCalls {
    const of = (side: CallSide, service: AwsService) => this.calls.filter((c) => c.side === side && c.service === service);
    const own = of('service', 'DynamoDB');
    const byCommand: Record<string, number> = {};
    for (const c of this.calls.filter((x) => x.side === 'service')) byCommand[`${c.service} ${c.command}`] = (byCommand[`${c.service} ${c.command}`] ?? 0) + 1;
    return {
      dynamodb: own.length,
      reads: own.filter((c) => c.kind === 'read').length,
      writes: own.filter((c) => c.kind === 'write').length,
      conditionalWrites: own.filter((c) => c.conditional).length,
      acquirerDynamodb: of('acquirer', 'DynamoDB').length,
      secretsManager: this.calls.filter((c) => c.service === 'SecretsManager').length,
      byCommand: Object.fromEntries(Object.entries(byCommand).sort()),
      sequence: [...this.calls],
      misattributed: [...this.misattributed],
    };
  }
}

export interface AwsCalls {
  /** The service's own DynamoDB calls (the acquirer's are counted apart). */
  readonly dynamodb: number;
  readonly reads: number;
  readonly writes: number;
  readonly conditionalWrites: number;
  /** DynamoDB calls the sandbox acquirer made for its own records. */
  readonly acquirerDynamodb: number;
  readonly secretsManager: number;
  /** The service's commands: "DynamoDB PutItemCommand" → 1 */
  readonly byCommand: Readonly<Record<string, number>>;
  /** Every call, service's and acquirer's, in the order sent. */
  readonly sequence: readonly AwsCall[];
  /** Calls whose key contradicts the side they were counted on (should be none). */
  readonly misattributed: readonly string[];
}

/** A target of the performance issue for one operation; `met` judges the counted calls. */
export interface CallTarget {
  readonly label: string;
  readonly met: (calls: AwsCalls) => boolean;
}

/** State one operation leaves for the next (a status check reads the session made before it). */
export interface OperationContext {
  readonly service: TestService;
  merchant?: MerchantCredentials;
  lastSession?: { readonly paymentId: string; readonly orderNumber: string };
  /** The checkout link the page steps work on. */
  link?: Session;
  /** Path (and query) of the page the previous step sent the customer to. */
  next?: string;
  /** A recurring charge's request, kept to replay it. */
  recurring?: RecurringInput;
  /** The payment the merchant API steps act on. */
  paymentId?: string;
  dmsMerchant?: MerchantCredentials;
  /** The loopback endpoint the callback operations post to. */
  receiver?: CallbackReceiver;
}

export interface Operation {
  readonly name: string;
  /** Steps of one customer flow share a name; the report adds each flow up. */
  readonly flow?: string;
  /** Set-up that is not counted, e.g. a fresh merchant for a cold secret cache. */
  readonly prepare?: (ctx: OperationContext) => Promise<void>;
  /** Exactly one request to the service; throws if the service did not do the job. */
  readonly perform: (ctx: OperationContext) => Promise<void>;
  /** Checks after the count (not counted), for answers that do not show the outcome ("accepted"). */
  readonly verify?: (ctx: OperationContext) => Promise<void>;
  /** The service's clock for prepare, perform and verify, when the wall clock would make the run depend on the hour. */
  readonly clock?: () => Clock;
  readonly target?: CallTarget;
}

const WARM: CallTarget = { label: '1 DynamoDB, 0 Secrets Manager', met: (c) => c.dynamodb === 1 && c.secretsManager === 0 };
const WARM_BY_INDEX: CallTarget = { label: '2 DynamoDB reads (index query, item), 0 Secrets Manager', met: (c) => c.dynamodb === 2 && c.reads === 2 && c.secretsManager === 0 };
/** The issue's void target, for the service's own calls (the acquirer is a separate system). */
/**
 * A void moves money, so it is intent-first (ADR 0016): the intent and the answer are two
 * conditional writes (the answer's write starts from the state the intent's write returned), after
 * one read.
 */
const VOID_TARGET: CallTarget = {
  label: '2 conditional writes (intent, answer) + ≤ 1 read, 0 Secrets Manager',
  met: (c) => c.writes === 2 && c.conditionalWrites === 2 && c.reads <= 1 && c.dynamodb === c.reads + c.writes && c.secretsManager === 0,
};
let orderSeq = 0;

const merchantOf = (ctx: OperationContext): MerchantCredentials => {
  if (!ctx.merchant) throw new Error('no merchant yet: an earlier operation must create one');
  return ctx.merchant;
};
const sessionOf = (ctx: OperationContext) => {
  if (!ctx.lastSession) throw new Error('no session yet: a create-session operation must come first');
  return ctx.lastSession;
};
const need = <T>(value: T | undefined, what: string): T => {
  if (value === undefined) throw new Error(`no ${what} yet: an earlier operation must make one`);
  return value;
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

/** Throws unless the answer has this status (and, for a redirect, goes where expected); returns its Location. */
function expectAnswer(what: string, res: HttpAnswer, statusCode: number, location?: RegExp): string {
  const where = String(res.headers.location ?? '');
  if (res.status !== statusCode || (location && !location.test(where))) {
    throw new Error(`${what}: expected HTTP ${statusCode}${location ? ` to ${location}` : ''}, got ${res.status} ${where}: ${res.text.slice(0, 300)}`);
  }
  return where;
}

const pathOf = (url: string) => {
  const u = new URL(url, 'http://localhost');
  return `${u.pathname}${u.search}`;
};
const get = (ctx: OperationContext, path: string) => ctx.service.request({ method: 'GET', path });

const SUCCESS_URL = /^https:\/\/shop\.example\/success/;

/** A recurring charge on a fresh chain of the merchant; the amount picks the sandbox's answer (.52: soft decline). */
async function newRecurringRequest(ctx: OperationContext, amount: string): Promise<RecurringInput> {
  const chain = await recurringChain(ctx.service, merchantOf(ctx));
  return { initTransId: chain.initTransId, token: chain.token, order: { number: `bench-recurring-${process.pid}-${++orderSeq}`, amount, description: 'Monthly box' } };
}

async function recurringCharge(ctx: OperationContext, what: string): Promise<void> {
  const res = await recurringOf<{ status?: string; payment_id?: string }>(ctx.service, merchantOf(ctx), need(ctx.recurring, 'recurring request'));
  expectStatus(what, res);
  if (res.json.status !== 'settled' || (ctx.paymentId && res.json.payment_id !== ctx.paymentId)) throw new Error(`${what}: ${res.text}`);
  ctx.paymentId = res.json.payment_id;
}

async function expectPaymentStatus(ctx: OperationContext, merchant: MerchantCredentials, expected: { status: string; refunded_amount?: string }): Promise<void> {
  const now = await statusOf(ctx.service, merchant, need(ctx.paymentId, 'payment'));
  if (now.status !== expected.status || now.refunded_amount !== expected.refunded_amount) throw new Error(`expected ${JSON.stringify(expected)}, status says ${JSON.stringify(now)}`);
}

/**
 * The void window closes at 21:00 UTC+3; this clock puts the void (and the payment before it) at
 * 12:00 UTC+3 of the run's day, moving with real time, so the row does not depend on the hour: the
 * local runner's CLOCK_START clock at the tests' time inside the window.
 */
const voidWindowClock = (): Clock => localClock({ CLOCK_START: insideVoidWindow() });

export const PAGE_PAYMENT_FLOW = 'page payment, 01/38';
export const THREE_DS_FLOW = '3-D Secure, 05/38';

/**
 * The operations whose AWS calls are counted, in order. Append an entry to cover a new
 * operation: its `perform` makes one request.
 */
export const OPERATIONS: readonly Operation[] = [
  {
    name: 'create-session, cold secret cache',
    prepare: async (ctx) => {
      ctx.merchant = await ctx.service.createMerchant({ name: 'Benchmark Shop' });
    },
    perform: createSession,
  },
  { name: 'create-session, warm secret cache', perform: createSession, target: WARM },
  { name: 'status by payment_id', perform: (ctx) => status(ctx, 'payment_id'), target: WARM },
  // The order index holds keys only (docs/architecture.md, "Keys and heat"): a query, then the payment by key.
  { name: 'status by order_id', perform: (ctx) => status(ctx, 'order_id'), target: WARM_BY_INDEX },
  {
    name: 'checkout page: GET /auth/{token} (form)',
    flow: PAGE_PAYMENT_FLOW,
    prepare: async (ctx) => {
      ctx.link = await openSession(ctx.service, merchantOf(ctx));
    },
    perform: async (ctx) => {
      const page = await get(ctx, need(ctx.link, 'link').path);
      expectAnswer('checkout page', page, 200);
      if (!page.text.includes('name="card_number"')) throw new Error(`checkout page: no card form: ${page.text.slice(0, 300)}`);
    },
  },
  {
    name: 'pay: POST /auth/{token}, 01/38 approved',
    flow: PAGE_PAYMENT_FLOW,
    perform: async (ctx) => {
      expectAnswer('pay 01/38', await submitPage(ctx.service, need(ctx.link, 'link'), { card: '01/38' }), 303, SUCCESS_URL);
    },
  },
  {
    name: 'pay: POST /auth/{token}, 05/38 challenged',
    flow: THREE_DS_FLOW,
    prepare: async (ctx) => {
      ctx.link = await openSession(ctx.service, merchantOf(ctx));
    },
    perform: async (ctx) => {
      const challenge = expectAnswer('pay 05/38', await submitPage(ctx.service, need(ctx.link, 'link'), { card: '05/38' }), 303, /\/sandbox\/challenge\//);
      ctx.next = pathOf(challenge);
    },
  },
  {
    name: 'challenge page: GET /sandbox/challenge/{key}',
    flow: THREE_DS_FLOW,
    perform: async (ctx) => {
      expectAnswer('challenge page', await get(ctx, need(ctx.next, 'challenge')), 200);
    },
  },
  {
    name: 'answer: POST /sandbox/challenge/{key}',
    flow: THREE_DS_FLOW,
    perform: async (ctx) => {
      // The page carries where to come back in a hidden field (from its own address); the form posts it.
      const page = new URL(need(ctx.next, 'challenge'), 'http://localhost');
      const answered = await ctx.service.request({
        path: page.pathname,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ code: '123456', decision: 'confirm', return: page.searchParams.get('return') ?? '' }).toString(),
      });
      ctx.next = pathOf(expectAnswer('challenge answer', answered, 303, /\/auth\/[^/]+\/complete$/));
    },
  },
  {
    name: 'complete: GET /auth/{token}/complete',
    flow: THREE_DS_FLOW,
    perform: async (ctx) => {
      expectAnswer('complete', await get(ctx, need(ctx.next, 'complete link')), 303, SUCCESS_URL);
    },
  },
  {
    name: 'recurring, first charge',
    prepare: async (ctx) => {
      ctx.paymentId = undefined;
      ctx.recurring = await newRecurringRequest(ctx, '10.00');
    },
    perform: (ctx) => recurringCharge(ctx, 'recurring'),
  },
  { name: 'recurring, replayed request', perform: (ctx) => recurringCharge(ctx, 'recurring replay') },
  {
    name: 'void, settled today',
    clock: voidWindowClock,
    prepare: async (ctx) => {
      ctx.paymentId = (await paidPayment(ctx.service, merchantOf(ctx))).paymentId;
    },
    perform: async (ctx) => {
      const res = await voidOf<{ status?: string }>(ctx.service, merchantOf(ctx), need(ctx.paymentId, 'payment'));
      expectStatus('void', res);
      if (res.json.status !== 'SUCCESS') throw new Error(`void: ${res.text}`);
    },
    target: VOID_TARGET,
  },
  {
    name: 'refund, partial (10.00 of 25.00)',
    prepare: async (ctx) => {
      ctx.paymentId = (await paidPayment(ctx.service, merchantOf(ctx))).paymentId;
    },
    perform: async (ctx) => {
      expectStatus('refund', await refundOf(ctx.service, merchantOf(ctx), need(ctx.paymentId, 'payment'), '10.00'));
    },
    verify: (ctx) => expectPaymentStatus(ctx, merchantOf(ctx), { status: 'settled', refunded_amount: '10.00' }),
  },
  {
    name: 'capture, DMS merchant (full amount)',
    prepare: async (ctx) => {
      const dms = await ctx.service.createMerchant({ name: 'Benchmark DMS Shop' });
      await updateMerchantSettings(ctx.service.deps, dms.merchant_key, { dms: true });
      ctx.dmsMerchant = dms;
      const paid = await paidPayment(ctx.service, dms);
      if (paid.status.status !== 'pending') throw new Error(`DMS payment is ${paid.status.status}, not pending`);
      ctx.paymentId = paid.paymentId;
    },
    perform: async (ctx) => {
      const res = await captureOf<{ trans_status?: string }>(ctx.service, need(ctx.dmsMerchant, 'DMS merchant'), need(ctx.paymentId, 'payment'), '25.00');
      expectStatus('capture', res);
      if (res.json.trans_status !== 'SUCCESS') throw new Error(`capture: ${res.text}`);
    },
    verify: (ctx) => expectPaymentStatus(ctx, need(ctx.dmsMerchant, 'DMS merchant'), { status: 'settled' }),
  },
  {
    name: 'retry after soft decline (amount .52)',
    prepare: async (ctx) => {
      const request = await newRecurringRequest(ctx, '10.52');
      const declined = await recurringOf<{ status?: string; payment_id?: string }>(ctx.service, merchantOf(ctx), request);
      if (declined.json.status !== 'declined' || !declined.json.payment_id) throw new Error(`soft decline expected: ${declined.text}`);
      ctx.paymentId = declined.json.payment_id;
    },
    perform: async (ctx) => {
      expectStatus('retry', await retryOf(ctx.service, merchantOf(ctx), need(ctx.paymentId, 'payment')));
    },
    verify: (ctx) => expectPaymentStatus(ctx, merchantOf(ctx), { status: 'settled' }),
  },
  {
    name: 'status of the retried payment',
    perform: async (ctx) => {
      await statusOf(ctx.service, merchantOf(ctx), need(ctx.paymentId, 'payment'));
    },
    target: WARM,
  },
  {
    name: 'callback relay: one sale callback delivered (receiver 200)',
    prepare: async (ctx) => {
      ctx.receiver ??= await startCallbackReceiver();
      await prepareOneDueCallback(ctx, need(ctx.receiver, 'receiver'));
    },
    perform: async (ctx) => expectRelayed(await runCallbackJob(ctx.service.deps), 'delivered'),
  },
  {
    name: 'callback relay: one failed attempt, retry scheduled (receiver 500)',
    prepare: async (ctx) => {
      const receiver = need(ctx.receiver, 'receiver');
      await prepareOneDueCallback(ctx, receiver);
      receiver.script(500);
    },
    perform: async (ctx) => expectRelayed(await runCallbackJob(ctx.service.deps), 'retrying'),
    verify: async (ctx) => {
      await ctx.receiver?.close();
      ctx.receiver = undefined;
    },
  },
];

/**
 * Leaves exactly one callback due: everything earlier operations left in the outbox is relayed first
 * (their merchant has no notification URL), then a merchant with one pays a session.
 */
async function prepareOneDueCallback(ctx: OperationContext, receiver: CallbackReceiver): Promise<void> {
  for (let i = 0; i < 20 && (await ctx.service.deps.callbacks.due(new Date(), 1)).length; i++) await runCallbackJob(ctx.service.deps);
  const shop = await ctx.service.createMerchant({ name: 'Benchmark Callback Shop', settings: { notificationUrl: receiver.url } });
  // Warm the merchant's secret in the cache, as a relay that has delivered before has it.
  await paidPayment(ctx.service, shop);
  await runCallbackJob(ctx.service.deps);
  await paidPayment(ctx.service, shop);
}

function expectRelayed(report: CallbackJobReport, outcome: 'delivered' | 'retrying'): void {
  if (report.payments !== 1 || report[outcome] !== 1 || report.failed) throw new Error(`one ${outcome} callback expected: ${JSON.stringify(report)}`);
}

/**
 * A counter on the service's SDK clients, with the calls of the acquirer's objects (the acquirer
 * itself, the sandbox, the sandbox's challenge pages) counted as the acquirer's: the one list of
 * them, for every measurement that separates our calls from the acquirer's.
 */
export function countCallsOf(service: TestService): AwsCallCounter {
  const counter = new AwsCallCounter();
  counter.attach(service.deps.db, 'DynamoDB');
  counter.attach(service.deps.secretsClient, 'SecretsManager');
  for (const part of new Set<object>([service.deps.acquirer, service.deps.sandbox, service.deps.sandbox.challenges])) counter.attributeToAcquirer(part);
  return counter;
}

export interface OperationCalls {
  readonly operation: Operation;
  readonly calls: AwsCalls;
  /** Undefined when the operation has no target. */
  readonly pass?: boolean;
}

export async function countAwsCalls(operations: readonly Operation[], service: TestService, counter: AwsCallCounter): Promise<OperationCalls[]> {
  const ctx: OperationContext = { service };
  const results: OperationCalls[] = [];
  for (const operation of operations) {
    if (operation.clock) setDeps({ ...service.deps, clock: operation.clock() });
    try {
      await operation.prepare?.(ctx);
      counter.reset();
      await operation.perform(ctx);
      const calls = counter.snapshot();
      if (calls.misattributed.length) throw new Error(`${operation.name}: calls counted on the wrong side: ${calls.misattributed.join('; ')}`);
      await operation.verify?.(ctx);
      results.push({ operation, calls, ...(operation.target ? { pass: operation.target.met(calls) } : {}) });
    } catch (e) {
      throw new Error(`${operation.name}: ${(e as Error).message}`, { cause: e });
    } finally {
      if (operation.clock) setDeps(service.deps);
    }
  }
  return results;
}

/** Sums of the operations that make up each flow, in order of first appearance. */
export function flowTotals(results: readonly OperationCalls[]): { flow: string; steps: number; dynamodb: number; acquirerDynamodb: number; secretsManager: number }[] {
  const flows = [...new Set(results.map((r) => r.operation.flow).filter((f): f is string => f !== undefined))];
  return flows.map((flow) => {
    const steps = results.filter((r) => r.operation.flow === flow);
    const sum = (pick: (c: AwsCalls) => number) => steps.reduce((n, r) => n + pick(r.calls), 0);
    return { flow, steps: steps.length, dynamodb: sum((c) => c.dynamodb), acquirerDynamodb: sum((c) => c.acquirerDynamodb), secretsManager: sum((c) => c.secretsManager) };
  });
}
