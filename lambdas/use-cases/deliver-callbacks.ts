import { telemetry } from '../observability/telemetry';
import {
  CALLBACK_POLICY,
  afterAnswer,
  afterTimeout,
  callbackFields,
  encodeForm,
  isBlocked,
  isSlow,
  retriesExhausted,
  retryDelayMs,
  type CallbackPolicy,
  type EndpointHealth,
} from '../domain/callback';
import { sentInTurn } from '../domain/attempts';
import { retryAtOnce, TRY_AGAIN } from '../domain/retry-policy';
import { SIGNATURE_HEADER, signatureHeader } from '../domain/webhook-signature';
import type { ShardPart } from '../ports/payments';
import type { DueCallback, CallbackClaim, CallbackRecord, CallbackStore, CallbackTransport, DeliveryAttempt, PostResult, ReleaseResult } from '../ports/callbacks';
import type { Clock } from '../ports/clock';
import type { Merchant, MerchantDirectory, MerchantSecrets } from '../ports/merchants';
import type { ReceiptOutbox } from '../ports/receipts';
import { earnsReceipt } from '../domain/receipt';
import { queueReceipt } from './queue-receipt';

export interface CallbackDeps {
  readonly callbacks: CallbackStore;
  readonly merchants: MerchantDirectory;
  readonly secrets: MerchantSecrets;
  readonly transport: CallbackTransport;
  readonly clock: Clock;
  /** A number in [0, 1): the jitter of retry delays. */
  readonly random: () => number;
  readonly callbackPolicy: CallbackPolicy;
  /** Where e-mail receipts are queued (ADR 0037); absent on a stage that sends none. */
  readonly receipts?: ReceiptOutbox;
}

export type DeliveryOutcome = 'delivered' | 'retrying' | 'dead' | 'skipped' | 'blocked' | 'deferred';

/** Callbacks of one payment sent in one go: bounded, so one busy payment cannot starve the others. */
export const CALLBACKS_PER_PAYMENT_RUN = 20;
/** How long a worker holds a payment beyond the POST's own timeout (writes before and after it). */
const LEASE_MARGIN_MS = 20_000;
/** Tries of the optimistic write that counts a URL's timeouts: every concurrent worker may win once before us. */
const HEALTH_WRITE_TRIES = 10;

export const NO_URL_REASON = 'The merchant has no notification URL.';
export const NO_SECRET_REASON = 'The merchant has no signing password.';

/**
 * Delivers the due callbacks of one payment, in order: each one is leased (a conditional write),
 * posted, and recorded; a failure schedules its retry and stops, so a later callback never
 * overtakes an earlier one. Safe to run from several workers at once.
 */
export async function deliverPaymentCallbacks(
  deps: CallbackDeps,
  paymentId: string,
  options: { readonly max?: number; readonly stopAt?: number; readonly deferSlow?: boolean; readonly fromStream?: boolean } = {},
): Promise<DeliveryOutcome[]> {
  const outcomes: DeliveryOutcome[] = [];
  const max = options.max ?? CALLBACKS_PER_PAYMENT_RUN;
  // Every callback of one payment goes to the same merchant: read it once per run.
  let merchant: Promise<Merchant | undefined> | undefined;
  const merchantOf = (key: string) => (merchant ??= deps.merchants.find(key));
  // The lease kept from the previous callback of this run, when one more was waiting (no write to take it again).
  let kept: string | undefined;
  while (outcomes.length < max) {
    // Each POST may take the whole timeout: do not start one that would outlive the run (a kept
    // lease was kept only with time for one more).
    if (kept === undefined && options.stopAt !== undefined && Date.now() + deps.callbackPolicy.timeoutMs > options.stopAt) break;
    const now = deps.clock.now();
    const claim = await deps.callbacks.claim(paymentId, now, new Date(now.getTime() + deps.callbackPolicy.timeoutMs + LEASE_MARGIN_MS), {
      fromStream: options.fromStream === true,
      ...(kept ? { keptLease: { lease: kept, until: new Date(now.getTime() + deps.callbackPolicy.timeoutMs + LEASE_MARGIN_MS / 2) } } : {}),
    });
    kept = undefined;
    if (!claim) break;
    // Keep the lease for the next callback only if this run will surely claim it.
    const another = outcomes.length + 1 < max && (options.stopAt === undefined || Date.now() + 2 * deps.callbackPolicy.timeoutMs <= options.stopAt);
    const { outcome, released } = await deliverClaimed(deps, claim, merchantOf, options.deferSlow === true, another);
    outcomes.push(outcome);
    if (outcome === 'retrying' || outcome === 'blocked' || outcome === 'deferred' || released !== 'released') break;
    if (another) kept = claim.lease;
  }
  return outcomes;
}

async function deliverClaimed(
  deps: CallbackDeps,
  claim: CallbackClaim,
  merchantOf: (merchantKey: string) => Promise<Merchant | undefined>,
  deferSlow: boolean,
  keepLease = false,
): Promise<{ outcome: DeliveryOutcome; released: ReleaseResult }> {
  const { payment, index } = claim;
  const tx = payment.transactions[index];
  const now = deps.clock.now();
  const at = now.toISOString();
  if (!tx) {
    // A resend of a position that does not exist (cannot be queued, but never loop on it).
    return { outcome: 'skipped', released: await deps.callbacks.release(claim, { done: true, dueAt: now }, { keepLease }) };
  }
  const settle = async (outcome: DeliveryOutcome, next: CallbackRecord, release: { done: boolean; dueAt: Date }) => ({
    outcome,
    released: await finish(deps, claim, next, release, keepLease),
  });
  // The payment's approval queues its e-mail receipt before its callback can be done with: a run
  // that dies after this leaves the callback due, and the next run's queueing finds it queued. A
  // callback with a record has been through here before (a retry): no write for it again.
  if (deps.receipts && !claim.resend && !claim.record && earnsReceipt(payment, tx)) await queueReceipt({ receipts: deps.receipts, clock: deps.clock }, payment, tx, await merchantOf(payment.merchantKey));
  const record = startRound(claim, at);
  // In turn, a ledger-only entry or a held decline is passed over (a resend of it is posted).
  const turn = sentInTurn(tx);
  if (!turn.send && !claim.resend) {
    return settle('skipped', { ...record, state: 'skipped', lastError: turn.why, updatedAt: at }, { done: true, dueAt: now });
  }
  const merchant = await merchantOf(payment.merchantKey);
  const url = merchant?.notificationUrl;
  if (!url) {
    return settle('skipped', { ...record, state: 'skipped', lastError: NO_URL_REASON, updatedAt: at }, { done: true, dueAt: now });
  }

  const health = await deps.callbacks.endpointHealth(url);
  if (isBlocked(health, now)) {
    // Waiting out a block is not an attempt: the record only says why nothing was sent.
    const lastError = `URL blocked until ${health.blockedUntil} after repeated timeouts.`;
    return settle('blocked', { ...record, nextAttemptAt: health.blockedUntil, lastError, updatedAt: at }, { done: false, dueAt: new Date(health.blockedUntil!) });
  }
  if (deferSlow && isSlow(health, now)) {
    // The stream's batch would wait on it (and the batches behind it): the relay's lane takes it now.
    return { outcome: 'deferred', released: await deps.callbacks.release(claim, { done: false, dueAt: now }) };
  }

  const password = await deps.secrets.passwordOf(payment.merchantKey);
  let result: PostResult;
  if (password) {
    const body = encodeForm(callbackFields(payment, tx, password));
    // The legacy hash says which order this is about; the signature proves the message is ours.
    // Under the merchant's last rotation, as read above: a secret rotated a moment ago signs already.
    const secrets = await deps.secrets.webhookSecretsOf(payment.merchantKey, now, merchant?.webhookSecretRotatedAt);
    const headers: Record<string, string> = secrets.length ? { [SIGNATURE_HEADER]: signatureHeader(body, deps.clock.now(), secrets) } : {};
    result = await deps.transport.post(url, body, deps.callbackPolicy.timeoutMs, headers);
  } else {
    result = { kind: 'failed', error: NO_SECRET_REASON, latencyMs: 0 };
  }
  const attempt: DeliveryAttempt = {
    at,
    url,
    latencyMs: result.latencyMs,
    ...(result.kind === 'answered' ? { httpStatus: result.httpStatus } : {}),
    ...(result.kind === 'timeout' ? { error: `No answer within ${deps.callbackPolicy.timeoutMs} ms.` } : {}),
    ...(result.kind === 'failed' ? { error: result.error } : {}),
    ...(result.kind === 'answered' && !isSuccess(result.httpStatus) ? { error: `HTTP ${result.httpStatus}` } : {}),
  };
  const attempted: CallbackRecord = {
    ...record,
    attemptCount: record.attemptCount + 1,
    attempts: [...record.attempts, attempt].slice(-deps.callbackPolicy.attemptsKept),
    roundStartedAt: record.roundStartedAt ?? at,
    updatedAt: at,
  };

  if (result.kind === 'answered') await noteAnswerTime(deps, url, health, result.latencyMs);
  if (result.kind === 'answered' && isSuccess(result.httpStatus)) {
    // A resend is the operators' doing: its lag says nothing about delivery.
    if (!claim.resend) telemetry.callbackDelivered(now.getTime() - Date.parse(tx.at));
    const { nextAttemptAt: _next, lastError: _error, ...rest } = attempted;
    return settle('delivered', { ...rest, state: 'delivered', deliveredAt: at }, { done: true, dueAt: now });
  }
  if (result.kind === 'timeout') await countTimeout(deps, url, health);

  const failures = attempted.roundFailures + 1;
  if (retriesExhausted(new Date(attempted.roundStartedAt!), now, deps.callbackPolicy)) {
    const { nextAttemptAt: _next, ...rest } = attempted;
    telemetry.callbackDead();
    return settle('dead', { ...rest, roundFailures: failures, state: 'dead', deadAt: at, lastError: attempt.error }, { done: true, dueAt: now });
  }
  const next = new Date(now.getTime() + retryDelayMs(failures, deps.random(), deps.callbackPolicy));
  return settle('retrying', { ...attempted, roundFailures: failures, state: 'pending', nextAttemptAt: next.toISOString(), lastError: attempt.error }, { done: false, dueAt: next });
}

const isSuccess = (status: number): boolean => status >= 200 && status < 300;

/** The record this attempt continues: a fresh one, the pending one, or a new round of a resent one. */
function startRound(claim: CallbackClaim, at: string): CallbackRecord {
  const tx = claim.payment.transactions[claim.index]!;
  const previous = claim.record;
  if (previous && previous.state === 'pending') return previous;
  const { deliveredAt: _d, deadAt: _x, nextAttemptAt: _n, roundStartedAt: _r, lastError: _e, ...kept } = previous ?? {
    paymentId: claim.payment.paymentId,
    merchantKey: claim.payment.merchantKey,
    index: claim.index,
    transId: tx.transId,
    type: tx.type,
    status: tx.status,
    attemptCount: 0,
    attempts: [],
    updatedAt: at,
  };
  return { ...kept, state: 'pending', roundFailures: 0, updatedAt: at } as CallbackRecord;
}

/**
 * The record first, then the lease: a crash in between sends this callback once more, never loses
 * it. A callback delivered at its first attempt (no record yet, not a resend) has no record item:
 * its attempt rides on the release, one write, and is its record (CallbackStore.release).
 */
async function finish(deps: CallbackDeps, claim: CallbackClaim, record: CallbackRecord, outcome: { done: boolean; dueAt: Date }, keepLease: boolean): Promise<ReleaseResult> {
  const first = record.attempts.length === 1 ? record.attempts[0] : undefined;
  if (record.state === 'delivered' && !claim.record && !claim.resend && record.attemptCount === 1 && first) {
    return deps.callbacks.release(claim, { ...outcome, delivered: first }, { keepLease });
  }
  await deps.callbacks.saveRecord(record);
  return deps.callbacks.release(claim, outcome, { keepLease });
}

/** Marks a URL slow (or no longer slow) after an answer; no write when nothing changes. One try: it is a hint. */
async function noteAnswerTime(deps: CallbackDeps, url: string, readBefore: EndpointHealth, latencyMs: number): Promise<void> {
  const next = afterAnswer(readBefore, latencyMs, deps.clock.now());
  if (next !== readBefore) await deps.callbacks.saveEndpointHealth(url, readBefore, next);
}

/** Counts a timeout on the health read before the POST; re-read only when another worker wrote first. */
async function countTimeout(deps: CallbackDeps, url: string, readBefore: EndpointHealth): Promise<void> {
  let seen = readBefore;
  await retryAtOnce(HEALTH_WRITE_TRIES, async () => {
    if (await deps.callbacks.saveEndpointHealth(url, seen, afterTimeout(seen, deps.clock.now(), deps.callbackPolicy))) return true;
    seen = await deps.callbacks.endpointHealth(url);
    return TRY_AGAIN;
  });
}

export interface CallbackJobReport {
  readonly payments: number;
  readonly delivered: number;
  readonly retrying: number;
  readonly dead: number;
  readonly skipped: number;
  readonly blocked: number;
  /** Left to the relay: the endpoint is slow (stream fast path only). */
  readonly deferred: number;
  readonly failed: number;
  readonly errors: string[];
  /** The payments that failed (they stay in the outbox). */
  readonly failedPaymentIds: string[];
}

/** Payments read per outbox read, and how many are worked on at once (each may wait on a slow receiver). */
export const CALLBACK_BATCH = 100;
export const CALLBACK_CONCURRENCY = 16;
/**
 * Payments of one merchant worked on at once: a slow or failing endpoint holds at most this many of
 * the workers, so other merchants' callbacks wait for no more than a free worker.
 */
export const CALLBACKS_PER_LANE = 2;
/** While a draining relay has work in progress, how often it looks for newly due callbacks. */
export const RELAY_POLL_MS = 500;
const MAX_ERRORS_REPORTED = 5;

export interface CallbackJobOptions {
  readonly limit?: number;
  readonly concurrency?: number;
  readonly perLane?: number;
  /** Wall-clock time after which no delivery is started. */
  readonly stopAt?: number;
  /** The stream's payments (the dispatcher); otherwise the outbox is read. */
  readonly payments?: readonly DueCallback[];
  readonly paymentIds?: readonly string[];
  /** Keep reading the outbox while time is left and work is in progress (the relay). */
  readonly drain?: boolean;
  /** Leave endpoints known to be slow to the relay (the stream's fast path). */
  readonly deferSlow?: boolean;
  /** The stream dispatcher: it takes the leases the writes left for it (CallbackStore.claim). */
  readonly fromStream?: boolean;
  /** This worker's part of the outbox's shards (a relay tick with several workers); all by default. */
  readonly part?: ShardPart;
}

/**
 * Delivers due callbacks in lanes, one per merchant: `concurrency` workers in all, at most
 * `perLane` of them on one merchant, the lanes served in turn. The relay (runs every minute; a
 * short local timer in the local runner) reads the outbox, and with `drain` keeps reading it while
 * its time lasts and deliveries are in progress, so a callback that becomes due meanwhile starts
 * on a free worker instead of waiting for a slow merchant's deliveries to end. The stream
 * dispatcher hands over its payments and, with `deferSlow`, leaves slow endpoints to the relay.
 * A payment that fails stays in the outbox for the next run.
 */
export async function runCallbackJob(deps: CallbackDeps, options: CallbackJobOptions = {}): Promise<CallbackJobReport> {
  const counts = { delivered: 0, retrying: 0, dead: 0, skipped: 0, blocked: 0, deferred: 0, failed: 0 };
  const errors: string[] = [];
  const failedPaymentIds: string[] = [];
  const concurrency = options.concurrency ?? CALLBACK_CONCURRENCY;
  const perLane = options.perLane ?? CALLBACKS_PER_LANE;
  const timeLeft = () => options.stopAt === undefined || Date.now() + deps.callbackPolicy.timeoutMs <= options.stopAt;

  const lanes = new Map<string, string[]>();
  const laneBusy = new Map<string, number>();
  const laneOf = new Map<string, string>();
  /** Taken in this run: in progress, or handled without a delivery (leased elsewhere, nothing due). */
  const taken = new Set<string>();
  const running = new Set<Promise<void>>();
  let payments = 0;
  let turn = 0;

  const enqueue = (due: readonly DueCallback[]) => {
    for (const { paymentId, merchantKey } of due) {
      if (taken.has(paymentId)) continue;
      taken.add(paymentId);
      const lane = merchantKey ?? `payment:${paymentId}`;
      laneOf.set(paymentId, lane);
      lanes.set(lane, [...(lanes.get(lane) ?? []), paymentId]);
    }
  };
  let backlogMeasured = false;
  const readOutbox = async () => {
    const now = deps.clock.now();
    const due = await deps.callbacks.dueEntries(now, options.limit ?? CALLBACK_BATCH, options.part);
    // The first read of a run, oldest first: how long the outbox's oldest due callback has waited.
    if (!backlogMeasured) telemetry.backlog('delivery', due[0]?.dueAt, now);
    backlogMeasured = true;
    enqueue(due);
  };

  /** The next payment of the next lane in turn that has a free slot. */
  const next = (): string | undefined => {
    const names = [...lanes.keys()];
    for (let i = 0; i < names.length; i++) {
      const lane = names[(turn + i) % names.length]!;
      const queue = lanes.get(lane)!;
      if (queue.length && (laneBusy.get(lane) ?? 0) < perLane) {
        turn = (turn + i + 1) % Math.max(1, names.length);
        const id = queue.shift()!;
        if (!queue.length && !(laneBusy.get(lane) ?? 0)) lanes.delete(lane);
        return id;
      }
    }
    return undefined;
  };

  const start = (id: string) => {
    const lane = laneOf.get(id)!;
    laneBusy.set(lane, (laneBusy.get(lane) ?? 0) + 1);
    payments++;
    const task = (async () => {
      try {
        const outcomes = await deliverPaymentCallbacks(deps, id, { stopAt: options.stopAt, deferSlow: options.deferSlow, fromStream: options.fromStream });
        for (const outcome of outcomes) counts[outcome]++;
        // Something went out: a later callback of this payment may become due in this run.
        if (outcomes.some((o) => o === 'delivered' || o === 'skipped')) taken.delete(id);
      } catch (e) {
        counts.failed++;
        failedPaymentIds.push(id);
        if (errors.length < MAX_ERRORS_REPORTED) errors.push(`${id}: ${(e as Error).name}`);
      } finally {
        const busy = (laneBusy.get(lane) ?? 1) - 1;
        laneBusy.set(lane, busy);
        if (!busy && !lanes.get(lane)?.length) {
          lanes.delete(lane);
          laneBusy.delete(lane);
        }
      }
    })();
    const tracked = task.then(() => void running.delete(tracked));
    running.add(tracked);
  };

  if (options.payments) enqueue(options.payments);
  else if (options.paymentIds) enqueue(options.paymentIds.map((paymentId) => ({ paymentId })));
  else await readOutbox();
  const fromOutbox = !options.payments && !options.paymentIds;

  for (;;) {
    for (let id = running.size < concurrency && timeLeft() ? next() : undefined; id !== undefined; id = running.size < concurrency && timeLeft() ? next() : undefined) start(id);
    if (!running.size) {
      // Idle: a draining relay looks once more for what became due, else the run is over.
      if (!(fromOutbox && options.drain && timeLeft())) break;
      const before = taken.size;
      await readOutbox();
      if (taken.size === before) break;
      continue;
    }
    if (fromOutbox && options.drain && timeLeft()) {
      // Work in progress: wake on a finished delivery or on the poll, whichever comes first.
      let timer: NodeJS.Timeout | undefined;
      const poll = new Promise<'poll'>((resolve) => (timer = setTimeout(() => resolve('poll'), RELAY_POLL_MS)));
      const woke = await Promise.race([...running, poll]);
      clearTimeout(timer);
      if (woke === 'poll') await readOutbox();
    } else {
      await Promise.race(running);
    }
  }
  return { payments, ...counts, errors, failedPaymentIds };
}

export { CALLBACK_POLICY };
