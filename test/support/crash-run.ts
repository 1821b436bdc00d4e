import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lambdas/adapters/dynamodb/client';
import { withoutStorageAttributes } from '../../lambdas/adapters/dynamodb/keys';
import { sandboxLedger } from '../../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import type { Payment } from '../../lambdas/domain/payment';
import { LOCAL_TABLE_NAME } from '../../local/backend';
import { startCallbackReceiver, type CallbackReceiver } from './callback-receiver';
import { checkPayment, type Divergence } from './ledger-checker';
import { paymentIdOf } from './links';
import { freePort, runTs, startTs, type Service } from './processes';
import { hashFor } from './sign';

/**
 * The real crash: the local runner (`npm start`, a child process on its own data directory) under a
 * mixed concurrent load — page payments, voids, racing partial refunds, DMS captures, recurring
 * charges — is killed with SIGKILL at random moments and restarted on the same data. After the last
 * restart the jobs run on the runner's own timer; then every payment must agree with the sandbox
 * acquirer's ledger with nothing in flight, and every callback must have arrived in order.
 */
export interface CrashRunOptions {
  readonly kills?: number;
  /** Payments started per round (half SMS, half DMS; a third with recurring_init). */
  readonly paymentsPerRound?: number;
  readonly seed?: number;
  readonly log?: (line: string) => void;
}

export interface CrashRunResult {
  readonly payments: number;
  readonly requests: number;
  readonly kills: number;
  /** HTTP 5xx answers from a live runner (connection errors of a killed one are not answers). */
  readonly fiveXx: number;
  readonly divergences: readonly Divergence[];
  /** From the last restart until the checker passed. */
  readonly reconcileMs: number;
  /** Callbacks sent again after a crash (delivery is at least once): immediate repeats only. */
  readonly callbackRepeats: number;
  /** Problems with the callbacks: missing, out of order, or repeated other than immediately. */
  readonly callbackProblems: readonly string[];
}

const SMS = { merchant_key: 'crash-shop', password: 'crash-password-0123456789' };

/** A small deterministic generator, so a failing run can be replayed with its seed. */
function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

export async function runCrashScenario(options: CrashRunOptions = {}): Promise<CrashRunResult> {
  const kills = options.kills ?? 3;
  const perRound = options.paymentsPerRound ?? 6;
  const log = options.log ?? (() => undefined);
  const rnd = random(options.seed ?? Date.now());
  const dataDir = mkdtempSync(join(tmpdir(), 'checkout-crash-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let runner: Service | undefined;
  let receiver: CallbackReceiver | undefined;
  const counts = { requests: 0, fiveXx: 0 };
  let dms = { merchant_key: '', password: '' };

  const startRunner = async () => {
    runner = startTs('local/main.ts', {
      DATA_DIR: dataDir,
      PORT: String(port),
      DEMO_MERCHANT_KEY: SMS.merchant_key,
      DEMO_MERCHANT_PASSWORD: SMS.password,
      RECONCILE_AFTER_SECONDS: '2',
      CALLBACK_FIRST_RETRY_MS: '250',
    });
    await runner.waitForLine(/^Checkout is running/, 60_000);
  };

  /** One signed API call; undefined when the runner was not there to answer. */
  const call = async (path: string, body: Record<string, unknown>, merchant = SMS): Promise<{ status: number; json: Record<string, unknown> } | undefined> => {
    counts.requests++;
    try {
      const signed = { merchant_key: merchant.merchant_key, ...body };
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...signed, hash: hashFor(path, signed, merchant.password) }),
        signal: AbortSignal.timeout(20_000),
      });
      const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
      if (res.status >= 500) {
        counts.fiveXx++;
        log(`5xx ${res.status} on ${path}: ${JSON.stringify(json)}`);
      }
      return { status: res.status, json };
    } catch {
      return undefined;
    }
  };

  const payOnPage = async (url: string) => {
    counts.requests++;
    try {
      const res = await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ card_number: '4111111111111111', card_expiry: '01/38', card_cvv: '123', card_holder: 'Crash Test' }).toString(),
        signal: AbortSignal.timeout(20_000),
      });
      await res.text();
      if (res.status >= 500) counts.fiveXx++;
    } catch {
      // The runner died under the request.
    }
  };

  /** One payment's life: session, page, then what the merchant does with it. */
  const lifecycle = async (n: number) => {
    const isDms = n % 2 === 1;
    const merchant = isDms ? dms : SMS;
    const recurringInit = !isDms && n % 3 === 0;
    const order = { number: `crash-${n}`, amount: '10.00', currency: 'USD', description: 'Crash order' };
    const session = await call('/api/v1/session', {
      operation: 'purchase',
      success_url: 'https://shop.example/ok',
      order,
      customer: { name: 'Crash Test', email: 'crash@example.com' },
      billing_address: { country: 'US' },
      ...(recurringInit ? { recurring_init: true } : {}),
    }, merchant);
    if (session?.status !== 200) return;
    const url = String(session.json.redirect_url);
    const paymentId = paymentIdOf(url);
    await payOnPage(url);
    const actions: Promise<unknown>[] = [];
    if (isDms) {
      actions.push(call('/api/v1/payment/capture', { payment_id: paymentId, amount: rnd() < 0.5 ? '10.00' : '6.00' }, merchant));
      actions.push(call('/api/v1/payment/capture', { payment_id: paymentId, amount: '10.00' }, merchant));
    } else {
      const roll = rnd();
      if (roll < 0.3) actions.push(call('/api/v1/payment/void', { payment_id: paymentId }));
      for (let i = 0; i < 3; i++) actions.push(call('/api/v1/payment/refund', { payment_id: paymentId, amount: '2.00' }));
      if (roll >= 0.3 && roll < 0.5) actions.push(call('/api/v1/payment/void', { payment_id: paymentId }));
      if (recurringInit) {
        const status = await call('/api/v1/payment/status', { payment_id: paymentId });
        const token = status?.json.recurring_token;
        const initTransId = status?.json.recurring_init_trans_id;
        if (token && initTransId) {
          for (const number of [`${order.number}-r1`, `${order.number}-R1`, `${order.number}-r2`]) {
            actions.push(call('/api/v1/payment/recurring', { recurring_init_trans_id: initTransId, recurring_token: token, order: { number, amount: '4.00', description: 'Crash renewal' } }));
          }
        }
      }
    }
    await Promise.all(actions);
  };

  const readAll = async () => {
    const { dynamodbEndpoint } = JSON.parse(readFileSync(join(dataDir, 'backend.json'), 'utf8')) as { dynamodbEndpoint: string };
    const db = createDocumentClient({ endpoint: dynamodbEndpoint });
    try {
      const items: Record<string, unknown>[] = [];
      let ExclusiveStartKey: Record<string, unknown> | undefined;
      do {
        const page = await db.send(new ScanCommand({ TableName: LOCAL_TABLE_NAME, ExclusiveStartKey, FilterExpression: 'sk = :p', ExpressionAttributeValues: { ':p': 'PAYMENT' } }));
        items.push(...(page.Items ?? []));
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey);
      const payments = items.map((i) => withoutStorageAttributes<Payment>(i));
      const divergences: Divergence[] = [];
      for (const p of payments) {
        // A session never paid holds nothing at either side.
        divergences.push(...checkPayment(p, await sandboxLedger(db, LOCAL_TABLE_NAME, p.paymentId), { settled: true }));
      }
      return { payments, divergences };
    } finally {
      db.destroy();
    }
  };

  try {
    receiver = await startCallbackReceiver();
    await startRunner();
    const set = await runTs('local/merchant-cli.ts', ['set', SMS.merchant_key, '--notification-url', receiver.url], { DATA_DIR: dataDir });
    if (set.code !== 0) throw new Error(`merchant set failed: ${set.stderr}`);
    const created = await runTs('local/merchant-cli.ts', ['create', '--name', 'Crash DMS Shop', '--dms', 'on', '--notification-url', receiver.url], { DATA_DIR: dataDir });
    if (created.code !== 0) throw new Error(`merchant create failed: ${created.stderr}`);
    dms = JSON.parse(created.stdout) as typeof dms;

    let n = 0;
    let lastRestart = Date.now();
    for (let round = 0; round <= kills; round++) {
      const load = Array.from({ length: perRound }, () => lifecycle(n++));
      if (round < kills) {
        await new Promise((r) => setTimeout(r, 150 + Math.floor(rnd() * 600)));
        await runner?.stop('SIGKILL');
        log(`round ${round + 1}: SIGKILL after ${counts.requests} requests`);
        await Promise.allSettled(load);
        await startRunner();
        lastRestart = Date.now();
      } else {
        await Promise.allSettled(load);
      }
    }

    // The jobs finish what the crashes left, on the runner's own timer.
    let state = await readAll();
    const deadline = Date.now() + 90_000;
    while (state.divergences.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000));
      state = await readAll();
    }
    const reconcileMs = Date.now() - lastRestart;
    log(`reconciled after crash in ${reconcileMs} ms (${state.payments.length} payments, ${state.divergences.length} divergences)`);

    // Every callback, in order per payment; a resend after a crash may repeat the one just sent.
    const expected = new Map(state.payments.map((p) => [p.paymentId, p.transactions.filter((t) => !t.internal).map((t) => `${t.type}/${t.status}`)]));
    const total = [...expected.values()].reduce((a, l) => a + l.length, 0);
    const problems: string[] = [];
    let repeats = 0;
    const cbDeadline = Date.now() + 60_000;
    const deliveredInOrder = () => {
      problems.length = 0;
      repeats = 0;
      for (const [id, want] of expected) {
        const got = (receiver?.received ?? []).filter((c) => c.fields.id === id).map((c) => `${c.fields.type}/${c.fields.status}`);
        const deduped = got.filter((g, i) => i === 0 || g !== got[i - 1] || want.filter((w) => w === g).length > got.slice(0, i).filter((x) => x === g).length);
        repeats += got.length - deduped.length;
        if (deduped.join(',') !== want.join(',')) problems.push(`${id}: expected ${want.join(',')}, got ${got.join(',')}`);
      }
      return problems.length === 0;
    };
    while (!deliveredInOrder() && Date.now() < cbDeadline) await new Promise((r) => setTimeout(r, 500));
    log(`callbacks: ${total} expected, ${receiver.received.length} received, ${repeats} repeated, ${problems.length} problems`);

    return {
      payments: state.payments.length,
      requests: counts.requests,
      kills,
      fiveXx: counts.fiveXx,
      divergences: state.divergences,
      reconcileMs,
      callbackRepeats: repeats,
      callbackProblems: [...problems],
    };
  } finally {
    runner?.kill();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

