import { heldDeclineIndex } from '../../lambdas/domain/attempts';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lambdas/adapters/dynamodb/client';
import { key } from '../../lambdas/adapters/dynamodb/keys';
import { joinedPayment } from '../../lambdas/adapters/dynamodb/payment-store';
import { sandboxLedger } from '../../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import type { Payment } from '../../lambdas/domain/payment';
import { startCallbackReceiver, verifiesWith, type CallbackReceiver, type ReceivedCallback } from './callback-receiver';
import { checkAgainstGateway, checkPayment, gatewayHolds, type Divergence } from './ledger-checker';
import { startFakeGateway, type FakeGateway, type GatewayAdversity } from './s2s-card-gateway';
import { paymentIdOf } from './links';
import { freePort, runTs, startTs, type Service } from './processes';
import { hashFor } from './sign';
import { sandboxWalletToken } from '../../lambdas/adapters/sandbox-acquirer/wallet-token';

/**
 * The real crash: the local runner (`npm start`, a child process on its own data directory and a
 * fixed port) under a mixed concurrent load over HTTP — sessions and page payments (a card, or an
 * Apple Pay or Google Pay token, sometimes two submissions of one link at once), racing partial
 * refunds, voids, DMS captures, recurring charges, some requests carrying an Idempotency-Key and
 * some of those sent twice at once — is killed with SIGKILL at random moments while requests are
 * in flight, and restarted on the same data and port; the load carries on across the restarts (a
 * request with an Idempotency-Key that the crash cut off is sent again once the runner is back).
 *
 * After the last restart the runner's own jobs finish what the crashes left (the reconciler asks
 * the acquirer about every intent in flight longer than RECONCILE_AFTER_SECONDS). Then every
 * payment item and the sandbox acquirer's ledger of each are read from the runner's store: the
 * ledger checker must find no divergence and nothing in flight, and every callback (one per
 * transaction not marked internal) must have arrived, in the payment's transaction order, a crash
 * allowing only an immediate resend of the callback just sent.
 *
 * With `acquirer: 's2s-card'` the runner pays through the S2S CARD connector against the fake
 * gateway (test/support/s2s-card-gateway.ts), which runs in this process and is never killed: it
 * carries out CREDITVOIDs a while after accepting them, loses some answers after doing the work,
 * loses, repeats, advances and delays callbacks, and sends them while the runner is down (lost: no
 * retry). The checker then compares every payment with the gateway's own ledger.
 */
export interface CrashRunOptions {
  /** SIGKILLs (each followed by a restart); at least 1. */
  readonly kills?: number;
  /** Payment lifecycles run at once. */
  readonly workers?: number;
  /** Decides the load's mix and the kill moments; the same seed replays the same decisions. */
  readonly seed?: number;
  /** How long, once the load after the last restart has ended, the checker may take to pass (60 s, plus 10 s per kill beyond 3). */
  readonly reconcileTimeoutMs?: number;
  /** How long, once reconciled, the callbacks may take to arrive. */
  readonly callbackTimeoutMs?: number;
  /** Progress lines (kills, restarts, what each kill left in flight). */
  readonly log?: (line: string) => void;
  /** Who moves the money: the sandbox acquirer (default) or the S2S CARD connector against the fake gateway. */
  readonly acquirer?: 'sandbox' | 's2s-card';
  /** S2S CARD: the gateway's misbehaviour (the default below when not given). */
  readonly gatewayAdversity?: Partial<GatewayAdversity>;
  /**
   * How long the load runs before each kill, drawn between these (ms): [1200, 3000] by default,
   * [4000, 7000] on S2S CARD, where a lifecycle takes longer (a refund waits for its callback), so
   * that as much is in flight when the kills hit.
   */
  readonly killSpacingMs?: readonly [number, number];
}

/**
 * The S2S CARD gateway of a crash run: refunds carried out 0.4 s after they are accepted (so the
 * kills find some accepted and not done), a tenth of the answers of money requests lost after the
 * work was done, callbacks lost, repeated, early and late.
 */
export const CRASH_GATEWAY_ADVERSITY: Partial<GatewayAdversity> = {
  loseAnswer: { SALE: 0.1, CAPTURE: 0.1, VOID: 0.1, CREDITVOID: 0.1, RECURRING_SALE: 0.1 },
  callbacks: { lose: 0.2, repeat: 0.2, beforeAnswer: 0.3, jitterMs: 200, hold: false },
  creditVoid: 400,
};

export interface CrashRunResult {
  readonly seed: number;
  /** Payment items in the store at the end (unpaid sessions included). */
  readonly payments: number;
  /** HTTP requests sent (each resend counts). */
  readonly requests: number;
  readonly kills: number;
  /** Requests the runner never answered because it was killed (or not up yet): expected. */
  readonly connectionErrors: number;
  /** Requests that were on their way when a kill hit. */
  readonly interrupted: number;
  /** Intents (attempts, operations, refunds) each kill left in flight, found right after the restart. */
  readonly orphanedIntents: number;
  /** HTTP 5xx answers from a live runner. */
  readonly fiveXx: number;
  /** Requests a live runner dropped or left unanswered for 20 s. */
  readonly unanswered: number;
  /** What went wrong in those, for the report. */
  readonly failures: readonly string[];
  /** A runner that had already exited when it was to be killed. */
  readonly unexpectedExits: number;
  /** Transactions at the end by type and status (`refund/success`: 12), to show what the load did. */
  readonly transactions: Readonly<Record<string, number>>;
  /** Payments whose last attempt was a wallet's at the end, and those of them paid (Apple Pay and Google Pay together). */
  readonly wallets: { readonly payments: number; readonly paid: number };
  /** Failed transactions at the end by type and reason (`sale: Declined by processing.`: 2). */
  readonly failuresByReason?: Readonly<Record<string, number>>;
  /** Left when the checker gave up (empty when it passed). */
  readonly divergences: readonly Divergence[];
  /** From the last restart (the runner answering again) until the checker passed; -1 if it never did. */
  readonly reconcileMs: number;
  /** Callbacks expected (one per transaction not marked internal) and received. */
  readonly callbacksExpected: number;
  readonly callbacksReceived: number;
  /** Immediate resends of the callback just before (delivery is at least once). */
  readonly callbackRepeats: number;
  /** Missing, out of order, repeated other than immediately, unknown, or with a hash that does not verify. */
  readonly callbackProblems: readonly string[];
  /** S2S CARD: what the gateway did wrong on purpose, by kind; callbacks it sent while the runner was down; CREDITVOIDs accepted and not done at each kill. */
  readonly gateway?: { readonly faults: Readonly<Record<string, number>>; readonly callbacksUnreachable: number; readonly waitingAtKills: number };
}

const DEMO = { merchant_key: 'crash-shop', password: 'crash-shop-password-0123456789' };
const CARD = { card_number: '4111111111111111', card_expiry: '01/38', card_cvv: '123', card_holder: 'Crash Test' };
/** What the page posts for a wallet payment, with the sandbox's test tokens (docs/sandbox.md, "Wallet tokens"), which the fake gateway reads too. */
const walletPost = (wallet: 'applepay' | 'googlepay', expiry: string, authMethod: 'PAN_ONLY' | 'CRYPTOGRAM_3DS' = 'CRYPTOGRAM_3DS') => ({
  wallet,
  network: 'VISA',
  last4: '1111',
  ...(wallet === 'googlepay' ? { auth_method: authMethod } : {}),
  payment_token: sandboxWalletToken({ wallet, network: 'VISA', last4: '1111', expiry, authMethod }),
});
/** Approved Apple Pay and Google Pay tokens; a declined one now and then (the link stays open for another try). */
const WALLET_POSTS = [walletPost('applepay', '01/38'), walletPost('googlepay', '01/38'), walletPost('googlepay', '01/38', 'PAN_ONLY')] as const;
const DECLINED_WALLET_POST = walletPost('googlepay', '02/38');
const REQUEST_TIMEOUT_MS = 20_000;

type Merchant = { readonly merchant_key: string; readonly password: string };
type Answer = { readonly status: number; readonly json: Record<string, unknown> };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The load a run does at the least, by kind of lifecycle run to its end, so that the tests' minimums
 * (payments, captures, refunds, recurring charges made) hold whatever the machine's speed. On S2S
 * CARD a lost answer may decline a chain's first payment, so one recurring chain is enough there.
 */
export const MIN_COMPLETED = { sandbox: { sale: 6, twoStage: 6, recurring: 3, wallet: 3 }, 's2s-card': { sale: 6, twoStage: 6, recurring: 1, wallet: 3 } } as const;

/** xorshift32: a small deterministic generator, so a run's decisions can be replayed from its seed. */
function generator(seed: number) {
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
  return {
    next,
    chance: (p: number) => next() < p,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T,
  };
}

type Random = ReturnType<typeof generator>;

/** A well-spread 32-bit seed from two numbers (the murmur3 finalizer). */
function mix(a: number, b: number): number {
  let h = (a ^ Math.imul(b + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Cleanups of runs still going (a test's afterAll calls stopCrashRuns when a run did not finish). */
const running = new Set<() => Promise<void>>();

/** Ends every child process of runs still going (idempotent). */
export async function stopCrashRuns(): Promise<void> {
  await Promise.all([...running].map((stop) => stop()));
}

/** What a callback stands for: its transaction and outcome. */
const callbackKey = (c: { trans_id?: string; type?: string; status?: string }) => `${c.trans_id}/${c.type}/${c.status}`;

/**
 * Checks one payment's callbacks against its transactions: each expected once, in order, where a
 * callback may come again only right after itself (a resend after a crash). Returns the problems
 * and how many immediate repeats there were.
 */
export function checkCallbackOrder(expected: readonly string[], received: readonly string[]): { problems: string[]; repeats: number } {
  const problems: string[] = [];
  let repeats = 0;
  let next = 0;
  received.forEach((got, i) => {
    if (got === expected[next]) next++;
    else if (i > 0 && got === received[i - 1]) repeats++;
    else problems.push(`callback ${i + 1} is ${got}, expected ${expected[next] ?? 'nothing more'}`);
  });
  if (next < expected.length) problems.push(`missing ${expected.slice(next).join(', ')}`);
  return { problems, repeats };
}

/** The store of a runner on this data directory (it announces its backend there for tools). */
export async function withRunnerStore<T>(dataDir: string, use: (db: DynamoDBDocumentClient, tableName: string) => Promise<T>): Promise<T> {
  const { dynamodbEndpoint, tableName } = JSON.parse(readFileSync(join(dataDir, 'backend.json'), 'utf8')) as { dynamodbEndpoint: string; tableName: string };
  // The run's own reads wait out a restart of the runner that serves the engine: a function's 2 s a try would give up during a kill.
  const db = createDocumentClient({ endpoint: dynamodbEndpoint, callTimeoutMs: 10_000 });
  try {
    return await use(db, tableName);
  } finally {
    db.destroy();
  }
}

/** Every item with this sort key. */
async function scan(db: DynamoDBDocumentClient, tableName: string, sk: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey, FilterExpression: 'sk = :sk', ExpressionAttributeValues: { ':sk': sk } }));
    items.push(...(page.Items ?? []));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}

/** Every payment: its state item joined with its details (a payment stored whole is read as it is). */
async function scanPayments(db: DynamoDBDocumentClient, tableName: string): Promise<Payment[]> {
  const details = new Map((await scan(db, tableName, key.paymentDetails('').sk)).map((i) => [String(i.pk), i]));
  return (await scan(db, tableName, key.payment('').sk)).flatMap((i) => {
    const payment = joinedPayment(i, details.get(String(i.pk)));
    return payment ? [payment] : [];
  });
}

/** Every payment in the store of a runner on this data directory. */
export const runnerPayments = (dataDir: string): Promise<Payment[]> => withRunnerStore(dataDir, scanPayments);

export async function runCrashScenario(options: CrashRunOptions = {}): Promise<CrashRunResult> {
  const kills = Math.max(1, options.kills ?? 3);
  const workers = options.workers ?? 8;
  const seed = options.seed ?? Date.now() % 2 ** 31;
  const log = options.log ?? (() => undefined);
  const rnd = generator(seed);
  const dataDir = mkdtempSync(join(tmpdir(), 'checkout-crash-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const s2s = options.acquirer === 's2s-card';
  const gateway: FakeGateway | undefined = s2s
    ? await startFakeGateway({ seed, notifyUrl: `${base}/acquirer/s2s-card/notify`, adversity: options.gatewayAdversity ?? CRASH_GATEWAY_ADVERSITY })
    : undefined;
  let waitingAtKills = 0;

  const counts = { requests: 0, connectionErrors: 0, interrupted: 0, fiveXx: 0, unanswered: 0, orphaned: 0, unexpectedExits: 0 };
  const failures: string[] = [];
  const fail = (line: string) => {
    if (failures.length < 50) failures.push(line);
    log(line);
  };

  // --- the runner -------------------------------------------------------------------------------
  let runner: Service | undefined;
  let receiver: CallbackReceiver | undefined;
  let stopped = false;
  /** Changes on every kill and every restart: a request that saw it change was cut off by a kill. */
  let epoch = 0;
  let alive = false;
  let inFlightRequests = 0;
  let wakeUp: () => void = () => undefined;
  let upAgain = Promise.resolve();

  const runnerEnv = {
    DATA_DIR: dataDir,
    PORT: String(port),
    DEMO_MERCHANT_KEY: DEMO.merchant_key,
    DEMO_MERCHANT_PASSWORD: DEMO.password,
    RECONCILE_AFTER_SECONDS: '2',
    // A look that found a refund not done yet, or a gateway call that timed out on a busy machine,
    // comes again in seconds, not the 5 minutes that would outlast the run's wait for agreement.
    RECONCILE_RETRY_SECONDS: '5',
    // Errors at least: a 5xx below quotes the runner's last error lines (a child of a Jest worker is otherwise silent).
    LOG_LEVEL: 'ERROR',
    // The runner shares two cores with the test workers and the gateway: a function's own work may
    // take several times what it takes on Lambda, where Middy's early timeout answered 503 with it.
    FUNCTION_TIMEOUT_SCALE: '3',
    // A callback cut off by a kill is tried again a quarter of a second later, not after 30 s.
    CALLBACK_FIRST_RETRY_MS: '250',
    ...(gateway
      ? {
          ACQUIRER: 's2s-card',
          S2S_CARD_URL: gateway.url,
          S2S_CARD_CLIENT_KEY: gateway.clientKey,
          S2S_CARD_PASSWORD: gateway.password,
          S2S_CARD_TIMEOUT_MS: '3000',
          // Shorter than the gateway's delay of a refund: most refunds are left to the reconciler.
          S2S_CARD_FOLLOW_UP_WAIT_MS: '300',
          // The id the stage's account is known by to Google Pay: without one an S2S CARD stage takes no Google Pay.
          GOOGLE_PAY_GATEWAY: 'crashgateway',
        }
      : {}),
  };

  const startRunner = async () => {
    if (stopped) throw new Error('the crash run was stopped');
    const service = startTs('local/main.ts', runnerEnv);
    runner = service;
    await service.waitForLine(/^Checkout is running/, 60_000);
    epoch++;
    alive = true;
    wakeUp();
  };

  const killRunner = async () => {
    alive = false;
    epoch++;
    upAgain = new Promise<void>((r) => (wakeUp = r));
    const ended = await runner?.stop('SIGKILL');
    if (ended && ended.signal !== 'SIGKILL') {
      counts.unexpectedExits++;
      fail(`the runner had already exited (${JSON.stringify(ended)}) before it was killed`);
    }
  };

  const waitForRunner = async () => {
    if (alive) return true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([upAgain, new Promise<void>((r) => (timer = setTimeout(r, 60_000)))]);
    clearTimeout(timer);
    return alive;
  };

  const cleanup = async () => {
    stopped = true;
    wakeUp();
    runner?.kill();
    await receiver?.close();
    await gateway?.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  let cleaned: Promise<void> | undefined;
  const cleanupOnce = () => (cleaned ??= cleanup());
  running.add(cleanupOnce);

  // --- HTTP -------------------------------------------------------------------------------------
  /** One HTTP request; 'dead' when no live runner answered it (killed under it, or not up yet). */
  const send = async (path: string, init: RequestInit, what: string): Promise<Answer | 'dead'> => {
    counts.requests++;
    const startedIn = epoch;
    const wasAlive = alive;
    inFlightRequests++;
    try {
      const res = await fetch(`${base}${path}`, { ...init, redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      const text = await res.text();
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // The page answers HTML.
      }
      if (res.status >= 500) {
        counts.fiveXx++;
        const errors = `${runner?.output() ?? ''}\n${runner?.errors() ?? ''}`.split('\n').filter((l) => /error/i.test(l)).slice(-3).join(' | ');
        fail(`HTTP ${res.status} on ${what}: ${text.slice(0, 300)}; the runner's last errors: ${errors || 'none logged'}`);
      }
      return { status: res.status, json };
    } catch (e) {
      counts.connectionErrors++;
      if (wasAlive && startedIn === epoch && alive) {
        // Nobody killed the runner while this request was on its way.
        counts.unanswered++;
        fail(`a live runner did not answer ${what}: ${(e as Error).name} ${(e as Error & { cause?: Error }).cause?.message ?? (e as Error).message}`);
      } else if (wasAlive) counts.interrupted++;
      return 'dead';
    } finally {
      inFlightRequests--;
    }
  };

  /**
   * A signed merchant API call. With an Idempotency-Key it is sent again, same key and body, when a
   * crash cut it off (what a merchant's client does); without one it is given up.
   */
  const api = async (merchant: Merchant, path: string, fields: Record<string, unknown>, key?: string): Promise<Answer | undefined> => {
    const body = { merchant_key: merchant.merchant_key, ...fields };
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      body: JSON.stringify({ ...body, hash: hashFor(path, body, merchant.password) }),
    };
    for (let attempt = 1; attempt <= 4; attempt++) {
      const answer = await send(path, init, `${path}${key ? ` (key ${key})` : ''}`);
      if (answer !== 'dead') return answer;
      if (!key || stopped || !(await waitForRunner())) return undefined;
    }
    return undefined;
  };

  /** A money operation: half carry an Idempotency-Key, and a few of those are sent twice at once. */
  const money = async (r: Random, merchant: Merchant, path: string, fields: Record<string, unknown>, key: string): Promise<Answer | undefined> => {
    if (!r.chance(0.5)) return api(merchant, path, fields);
    if (!r.chance(0.2)) return api(merchant, path, fields, key);
    const [first] = await Promise.all([api(merchant, path, fields, key), api(merchant, path, fields, key)]);
    return first;
  };

  /** The customer's form post on the hosted page (the card form, or a wallet's token); posted again once the runner is back if a crash cut it off. */
  const payOnPage = async (url: string, form: Readonly<Record<string, string>> = CARD) => {
    const { pathname } = new URL(url);
    const init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() };
    if ((await send(pathname, init, 'the page post')) === 'dead' && !stopped && (await waitForRunner())) await send(pathname, init, 'the page post (again)');
  };

  const session = async (r: Random, merchant: Merchant, n: number, extra: Record<string, unknown> = {}): Promise<string | undefined> => {
    const answer = await api(
      merchant,
      '/api/v1/session',
      {
        operation: 'purchase',
        success_url: 'https://shop.example/ok',
        order: { number: `crash-${n}`, amount: '10.00', currency: 'USD', description: 'Crash order' },
        customer: { name: 'Crash Test', email: 'crash@example.com' },
        billing_address: { country: 'US' },
        ...extra,
      },
      r.chance(0.5) ? `session-${seed}-${n}` : undefined,
    );
    return answer?.status === 200 ? String(answer.json.redirect_url) : undefined;
  };

  // --- the load ---------------------------------------------------------------------------------
  let dms: Merchant = { merchant_key: '', password: '' };
  const REFUNDS = ['1.00', '2.50', '3.00', '4.00', '5.00'];

  /** A one-stage sale, then partial refunds racing each other (and sometimes a void). */
  const saleWithRefunds = async (r: Random, n: number) => {
    const url = await session(r, DEMO, n);
    if (!url) return;
    const paymentId = paymentIdOf(url);
    await payOnPage(url);
    const ops = Array.from({ length: r.int(2, 4) }, (_, i) => () => money(r, DEMO, '/api/v1/payment/refund', { payment_id: paymentId, amount: r.pick(REFUNDS) }, `refund-${seed}-${n}-${i}`));
    if (r.chance(0.35)) ops.splice(r.int(0, ops.length), 0, () => money(r, DEMO, '/api/v1/payment/void', { payment_id: paymentId }, `void-${seed}-${n}`));
    await Promise.all(ops.map((op) => op()));
    return true;
  };

  /**
   * A wallet payment (Apple Pay, or Google Pay with a device token or PAN_ONLY), sometimes declined
   * first and paid with another try, sometimes racing a second submission of the link (a card or
   * another wallet); then partial refunds racing each other (and sometimes a void).
   */
  const walletSale = async (r: Random, n: number) => {
    const url = await session(r, DEMO, n);
    if (!url) return;
    const paymentId = paymentIdOf(url);
    if (r.chance(0.2)) await payOnPage(url, DECLINED_WALLET_POST);
    const second = r.chance(0.3) ? [r.chance(0.5) ? CARD : r.pick(WALLET_POSTS)] : [];
    await Promise.all([payOnPage(url, r.pick(WALLET_POSTS)), ...second.map((form) => payOnPage(url, form))]);
    const ops = Array.from({ length: r.int(1, 3) }, (_, i) => () => money(r, DEMO, '/api/v1/payment/refund', { payment_id: paymentId, amount: r.pick(REFUNDS) }, `refund-${seed}-${n}-${i}`));
    if (r.chance(0.35)) ops.splice(r.int(0, ops.length), 0, () => money(r, DEMO, '/api/v1/payment/void', { payment_id: paymentId }, `void-${seed}-${n}`));
    await Promise.all(ops.map((op) => op()));
    return true;
  };

  /** A two-stage payment: captures racing each other (sometimes a void too), then racing refunds. */
  const authThenCapture = async (r: Random, n: number) => {
    const url = await session(r, dms, n);
    if (!url) return;
    const paymentId = paymentIdOf(url);
    await payOnPage(url);
    const ops = [
      () => money(r, dms, '/api/v1/payment/capture', { payment_id: paymentId, amount: r.pick(['10.00', '6.00', '8.50']) }, `capture-${seed}-${n}-0`),
      () => money(r, dms, '/api/v1/payment/capture', { payment_id: paymentId, amount: '10.00' }, `capture-${seed}-${n}-1`),
    ];
    if (r.chance(0.25)) ops.push(() => money(r, dms, '/api/v1/payment/void', { payment_id: paymentId }, `void-${seed}-${n}`));
    await Promise.all(ops.map((op) => op()));
    await Promise.all(Array.from({ length: r.int(0, 3) }, (_, i) => money(r, dms, '/api/v1/payment/refund', { payment_id: paymentId, amount: r.pick(['1.00', '2.00', '3.00']) }, `refund-${seed}-${n}-${i}`)));
    return true;
  };

  /** A recurring_init sale, then merchant-initiated charges at once, then a refund or void of one. */
  const recurringChain = async (r: Random, n: number) => {
    const url = await session(r, DEMO, n, { recurring_init: true });
    if (!url) return;
    const paymentId = paymentIdOf(url);
    await payOnPage(url);
    const status = await api(DEMO, '/api/v1/payment/status', { payment_id: paymentId });
    const token = status?.json.recurring_token;
    const initTransId = status?.json.recurring_init_trans_id;
    if (typeof token !== 'string' || typeof initTransId !== 'string') return;
    const charges = await Promise.all(
      Array.from({ length: r.int(2, 3) }, (_, i) => {
        const fields = { recurring_init_trans_id: initTransId, recurring_token: token, order: { number: `crash-${n}-r${i}`, amount: r.pick(['4.00', '3.00', '7.00']), description: 'Crash renewal' } };
        return r.chance(0.5) ? api(DEMO, '/api/v1/payment/recurring', fields, `recurring-${seed}-${n}-${i}`) : api(DEMO, '/api/v1/payment/recurring', fields);
      }),
    );
    const charged = charges.map((c) => c?.json.payment_id).filter((id): id is string => typeof id === 'string');
    const target = charged.length ? r.pick(charged) : undefined;
    await Promise.all([
      money(r, DEMO, '/api/v1/payment/refund', { payment_id: paymentId, amount: '2.00' }, `refund-${seed}-${n}-init`),
      ...(target
        ? [
            money(r, DEMO, '/api/v1/payment/refund', { payment_id: target, amount: '1.00' }, `refund-${seed}-${n}-r`),
            ...(r.chance(0.5) ? [money(r, DEMO, '/api/v1/payment/void', { payment_id: target }, `void-${seed}-${n}-r`)] : []),
          ]
        : []),
    ]);
    return charged.length > 0;
  };

  let stopLoad = false;
  let lifecycles = 0;
  /** Lifecycles that ran to their end (a recurring chain: with a charge made), by kind. */
  const completed = { sale: 0, twoStage: 0, recurring: 0, wallet: 0 };
  const worker = async () => {
    while (!stopLoad) {
      if (!(await waitForRunner())) return;
      const n = lifecycles++;
      // Each lifecycle draws from its own generator: its decisions depend on the seed and its number only.
      const r = generator(mix(seed, n));
      // Two in six are card sales with refunds, two two-stage payments, one a wallet payment, one a recurring chain.
      const [kind, lifecycle] = ([['sale', saleWithRefunds], ['twoStage', authThenCapture], ['wallet', walletSale], ['sale', saleWithRefunds], ['twoStage', authThenCapture], ['recurring', recurringChain]] as const)[n % 6]!;
      if (await lifecycle(r, n)) completed[kind]++;
    }
  };

  // --- the store --------------------------------------------------------------------------------
  const withStore = <T>(use: (db: DynamoDBDocumentClient, tableName: string) => Promise<T>) => withRunnerStore(dataDir, use);

  const readPayments = () => withStore(scanPayments);

  /** Every payment against the acquirer's ledger of it. */
  const check = () =>
    withStore(async (db, tableName) => {
      const payments = await scanPayments(db, tableName);
      if (gateway) {
        const divergences = payments.flatMap((p) => checkAgainstGateway(p, gateway.ledgerOf(p.paymentId), { settled: true }));
        const ours = new Set(payments.map((p) => p.paymentId.toLowerCase()));
        for (const id of gateway.paymentIds()) {
          if (ours.has(id.toLowerCase())) continue;
          const held = gateway.ledgerOf(id).reduce((n, t) => n + gatewayHolds(t), 0);
          if (held) divergences.push({ paymentId: id, problem: `the gateway holds ${held} for a payment we have no record of` });
        }
        return { payments, divergences };
      }
      const divergences: Divergence[] = [];
      for (const p of payments) divergences.push(...checkPayment(p, await sandboxLedger(db, tableName, p.paymentId), { settled: true }));
      // Money the acquirer moved for a payment we have no record of would escape the check above.
      const ours = new Set(payments.map((p) => `SANDBOX#${p.paymentId.toLowerCase()}`));
      for (const ledger of await scan(db, tableName, 'LEDGER')) {
        if (!ours.has(String(ledger.pk))) divergences.push({ paymentId: String(ledger.pk).replace(/^SANDBOX#/, ''), problem: 'the acquirer has a ledger for a payment we have no record of' });
      }
      return { payments, divergences };
    });

  /** Intents started on the killed runner (after `since`, before `before`) and still in flight: what the kill left. */
  const orphansOf = async (since: number, before: number) => {
    const old = (at?: string) => at !== undefined && Date.parse(at) > since && Date.parse(at) <= before;
    let n = 0;
    for (const p of await readPayments()) {
      n += [p.inFlight?.startedAt, p.action?.startedAt, p.operation?.startedAt, ...Object.values(p.refunds ?? {}).map((r) => r.startedAt)].filter(old).length;
    }
    return n;
  };

  // --- the run ----------------------------------------------------------------------------------
  try {
    receiver = await startCallbackReceiver();
    await startRunner();
    // The one-stage merchant takes Apple Pay (with the stage's merchant identifier) and Google Pay.
    const set = await runTs('local/merchant-cli.ts', ['set', DEMO.merchant_key, '--notification-url', receiver.url, '--wallets', 'applepay,googlepay', '--google-pay-gateway-merchant-id', 'crashGatewayMerchantId'], { DATA_DIR: dataDir });
    if (set.code !== 0) throw new Error(`merchant set failed: ${set.stderr}`);
    const created = await runTs('local/merchant-cli.ts', ['create', '--name', 'Crash Two-Stage Shop', '--dms', 'on', '--notification-url', receiver.url], { DATA_DIR: dataDir });
    if (created.code !== 0) throw new Error(`merchant create failed: ${created.stderr}`);
    dms = JSON.parse(created.stdout) as Merchant;
    const passwords = new Map([DEMO, dms].map((m) => [m.merchant_key, m.password]));

    const load = Array.from({ length: workers }, () => worker());
    let lastRestart = Date.now();
    let previousKill = 0;
    for (let k = 1; k <= kills; k++) {
      // A random moment of the load, taken while requests are on their way to the runner.
      await sleep(rnd.int(...(options.killSpacingMs ?? (s2s ? [4000, 7000] : [1200, 3000]))));
      const aimUntil = Date.now() + 1000;
      while (inFlightRequests === 0 && Date.now() < aimUntil) await sleep(5);
      const cutOff = inFlightRequests;
      const killedAt = Date.now();
      const waitingNow = gateway ? [...gateway.transactions.values()].reduce((n, t) => n + t.operations.filter((o) => o.result === 'WAITING').length, 0) : 0;
      waitingAtKills += waitingNow;
      await killRunner();
      await sleep(rnd.int(0, 400));
      await startRunner();
      lastRestart = Date.now();
      const orphans = await orphansOf(previousKill, killedAt);
      previousKill = killedAt;
      counts.orphaned += orphans;
      log(`kill ${k}: SIGKILL with ${cutOff} requests on their way (${counts.requests} sent so far); back after ${lastRestart - killedAt} ms; ${orphans} intents left in flight${gateway ? `; ${waitingNow} CREDITVOIDs accepted and not done at the gateway` : ''}`);
    }
    // The load goes on for a moment on the last runner, and until enough of each kind has been done
    // to prove something (a machine busy with other work gets through fewer in the same time; at
    // most 60 s more), then the lifecycles under way finish.
    await sleep(1500);
    const volumeDeadline = Date.now() + 60_000;
    const least = MIN_COMPLETED[s2s ? 's2s-card' : 'sandbox'];
    const enough = () => completed.sale >= least.sale && completed.twoStage >= least.twoStage && completed.recurring >= least.recurring && completed.wallet >= least.wallet;
    while (!enough() && Date.now() < volumeDeadline) await sleep(100);
    stopLoad = true;
    await Promise.all(load);
    log(`load done: ${lifecycles} payment lifecycles (${JSON.stringify(completed)} ran to their end), ${counts.requests} requests`);

    // The runner's own jobs finish what the crashes left.
    // The reconciler settles RECONCILE_BATCH payments per run, every 10 s: longer runs leave more.
    // The wait starts when the load has ended: on a busy machine the load alone took most of a minute
    // after the last restart, and a wait counted from the restart left the reconciler seconds.
    const reconcileDeadline = Date.now() + (options.reconcileTimeoutMs ?? 60_000 + 10_000 * Math.max(0, kills - 3));
    let state = await check();
    while (state.divergences.length && Date.now() < reconcileDeadline) {
      await sleep(500);
      state = await check();
    }
    const reconcileMs = state.divergences.length ? -1 : Date.now() - lastRestart;
    log(state.divergences.length ? `not reconciled after ${Date.now() - lastRestart} ms: ${state.divergences.length} divergences` : `reconciled ${reconcileMs} ms after the last restart`);

    // Every callback, in order per payment.
    const callbackDeadline = Date.now() + (options.callbackTimeoutMs ?? 60_000);
    const callbacksOf = (payments: readonly Payment[]) => {
      const received = receiver?.received ?? [];
      const byPayment = new Map<string, ReceivedCallback[]>();
      for (const c of received) byPayment.set(c.fields.id ?? '', [...(byPayment.get(c.fields.id ?? '') ?? []), c]);
      const problems: string[] = [];
      let repeats = 0;
      let expectedCount = 0;
      const known = new Set<string>();
      for (const p of payments) {
        known.add(p.paymentId);
        // Ledger-only entries are never sent; a held decline only once the link closed on it, behind the others.
        const held = p.linkClosed ? heldDeclineIndex(p) : undefined;
        const sent = [...p.transactions.filter((t) => !t.internal && !t.held), ...(held !== undefined ? [p.transactions[held]!] : [])];
        expectedCount += sent.length;
        const got = byPayment.get(p.paymentId) ?? [];
        const order = checkCallbackOrder(sent.map((t) => callbackKey({ trans_id: t.transId, type: t.type, status: t.status })), got.map((c) => callbackKey(c.fields)));
        repeats += order.repeats;
        problems.push(...order.problems.map((problem) => `${p.paymentId}: ${problem}`));
        const password = passwords.get(p.merchantKey) ?? '';
        for (const c of got) if (!verifiesWith(c, password)) problems.push(`${p.paymentId}: the hash of callback ${callbackKey(c.fields)} does not verify`);
        // A callback reports the status the payment had right after its transaction.
        for (const c of got) {
          const tx = sent.find((t) => t.transId === c.fields.trans_id && t.type === c.fields.type && t.status === c.fields.status);
          if (tx?.orderStatus && c.fields.order_status !== tx.orderStatus) problems.push(`${p.paymentId}: callback ${callbackKey(c.fields)} says order_status ${c.fields.order_status}, the transaction ${tx.orderStatus}`);
        }
      }
      for (const id of byPayment.keys()) if (!known.has(id)) problems.push(`callbacks for an unknown payment ${id}`);
      return { problems, repeats, expectedCount, received: received.length };
    };
    let callbacks = callbacksOf(state.payments);
    while (callbacks.problems.length && Date.now() < callbackDeadline) {
      await sleep(500);
      // Read again: a job may have added a transaction (and its callback) meanwhile.
      callbacks = callbacksOf(await readPayments());
    }
    log(`callbacks: ${callbacks.expectedCount} expected, ${callbacks.received} received, ${callbacks.repeats} immediate repeats, ${callbacks.problems.length} problems`);

    return {
      seed,
      payments: state.payments.length,
      requests: counts.requests,
      kills,
      connectionErrors: counts.connectionErrors,
      interrupted: counts.interrupted,
      orphanedIntents: counts.orphaned,
      fiveXx: counts.fiveXx,
      unanswered: counts.unanswered,
      failures,
      unexpectedExits: counts.unexpectedExits,
      transactions: Object.fromEntries(
        [...state.payments.flatMap((p) => p.transactions.map((t) => `${t.type}/${t.status}`)).reduce((m, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map<string, number>())].sort(),
      ),
      wallets: { payments: state.payments.filter((p) => p.wallet).length, paid: state.payments.filter((p) => p.wallet && p.paidAt).length },
      failuresByReason: Object.fromEntries(
        [...state.payments.flatMap((p) => p.transactions.filter((t) => t.status === 'fail').map((t) => `${t.type}: ${t.reason ?? p.reason ?? '?'}`)).reduce((m, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map<string, number>())].sort(),
      ),
      divergences: state.divergences,
      reconcileMs,
      callbacksExpected: callbacks.expectedCount,
      callbacksReceived: callbacks.received,
      callbackRepeats: callbacks.repeats,
      callbackProblems: callbacks.problems,
      ...(gateway
        ? { gateway: { faults: { ...gateway.faults }, callbacksUnreachable: gateway.callbacks.filter((c) => c.answer.startsWith('unreachable')).length, waitingAtKills } }
        : {}),
    };
  } finally {
    stopLoad = true;
    await cleanupOnce();
    running.delete(cleanupOnce);
  }
}
