import fc from 'fast-check';
import { ManualClock } from '../../lambdas/ports/clock';
import type { Payment } from '../../lambdas/domain/payment';
import type { Deps } from '../../lambdas/container';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { attemptState, completeAction, pay, payWithWallet, type WalletForm } from '../../lambdas/use-cases/checkout';
import { capture, release } from '../../lambdas/use-cases/capture-payment';
import { runCaptureJob } from '../../lambdas/use-cases/capture-job';
import { createSession } from '../../lambdas/use-cases/create-session';
import { sessionCommandOf, validateCreateSession } from '../../lambdas/protocol/merchant/session';
import { updateMerchantSettings } from '../../lambdas/use-cases/manage-merchants';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { chargeRecurring } from '../../lambdas/use-cases/recurring-payment';
import { refundPayment } from '../../lambdas/protocol/merchant/refund';
import { retryOwnPayment } from '../../lambdas/protocol/merchant/retry';
import { voidOwnPayment } from '../../lambdas/protocol/merchant/void';
import { toStatusResponse } from '../../lambdas/protocol/merchant/status';
import { paymentStatus } from '../../lambdas/use-cases/payment-status';
import { sandboxWalletToken } from '../../lambdas/adapters/sandbox-acquirer/wallet-token';
import { pageWalletsOf } from '../../lambdas/checkout-page/wallets';
import type { Wallet } from '../../lambdas/domain/wallet';
import { SANDBOX_OTP } from '../../lambdas/adapters/sandbox-acquirer/rules';
import { sandboxLedger } from '../../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import { checkAgainstGateway, checkPayment, gatewayHolds, type Divergence } from './ledger-checker';
import { S2SCardAcquirer } from '../../lambdas/adapters/s2s-card/s2s-card-acquirer';
import { startFakeGateway, wellBehaved, type FakeGateway, type GatewayAdversity } from './s2s-card-gateway';
import { withFault, withoutClose, type Fault } from './faults';
import { validSessionBody } from './fixtures';
import { TEST_PAN } from './payments';
import { LOCAL_SHARDS, shardOf } from '../../lambdas/adapters/dynamodb/keys';
import type { ShardPart } from '../../lambdas/ports/payments';
import { MemoryPaymentStore } from '../../lambdas/adapters/memory/payment-store';
import type { PaymentStore } from '../../lambdas/ports/payments';
import { setDeps } from '../../lambdas/container';
import { soakCount, soaking } from './soak';
import { startTestService, type TestService } from './service';

/**
 * The money model: random interleavings of every operation that moves money — pay (approved,
 * declined, 3-D Secure, no answer) with a card or a wallet's token, a second submission of the link
 * with a card or a wallet, the customer's challenge answer or abandonment, void, partial and full
 * refunds, capture, release, recurring charges and their retries, the reconcile and capture
 * jobs — with a fault injected at a random step boundary of any of them (a crash before or right
 * after a write, a request the acquirer never got, a reply it sent that we lost), pairs of them
 * racing, time moved across the void window, the link's expiry and the authorization's validity,
 * and acquirers that can or cannot close what they were asked. After each run the reconciler runs
 * and the ledger checker must find our records and the sandbox acquirer's ledger in agreement, with
 * nothing left in flight. A failing run prints its seed and path; fast-check shrinks it.
 *
 * The same model runs over either connector. On `s2s-card` the service pays through the S2S CARD
 * connector against the fake gateway over real HTTP (test/support/s2s-card-gateway.ts), each run
 * with its own drawn misbehaviour of the gateway (requests dropped, answers lost after the work was
 * done, slow answers past the client's timeout, callbacks lost, repeated, early, late, held and then
 * delivered at once, CREDITVOIDs carried out at once, later or only when the run says so), and the
 * checker compares each payment with the gateway's own ledger (`checkAgainstGateway`).
 *
 * Wallet payments (docs/wallets.md) run through the same steps as a card: a run may start with an
 * Apple Pay or Google Pay token (approved, declined, unreadable, Google Pay's PAN_ONLY on a 3-D
 * Secure card with its challenge answered, refused or abandoned), and any step may submit the link
 * again with a wallet, racing the rest (a card, another wallet, void, refund, the merchant's status).
 * On S2S CARD the wallet SALE (`digital_wallet`, `payment_token`, Formula 8) meets the gateway's
 * misbehaviour like any SALE, and its later requests and callbacks carry empty card digits.
 */
const T0 = new Date('2031-05-05T06:00:00Z');
const MINUTE = 60_000;

type Op =
  // The run's own instrument (its card, or its wallet token), the approved card, an approved Apple Pay token,
  // a Google Pay PAN_ONLY token on the 3-D Secure card (a challenge).
  | 'pay' | 'pay-again' | 'pay-applepay' | 'pay-googlepay' | 'answer' | 'refuse-answer' | 'return' | 'void' | 'refund-part' | 'refund-all' | 'capture-part' | 'capture-all'
  | 'release' | 'recurring' | 'retry' | 'reconcile' | 'capture-job' | 'minutes' | 'hours' | 'day'
  // The merchant asks for the payment's status and the customer's processing page polls (reads racing the writes).
  | 'status'
  // The acquirer charges the payment back (the cardholder's bank): part of it, or all that is left.
  | 'chargeback-part' | 'chargeback-all'
  // S2S CARD only: the gateway sends the callbacks it held back and carries out the CREDITVOIDs it kept waiting;
  // the merchant switches between one-stage and two-stage (what an attempt already sent must keep its mode).
  | 'gateway-catches-up' | 'merchant-switches';

export type Connector = 'sandbox' | 's2s-card';

const OPS: readonly Op[] = [
  'pay', 'pay-again', 'answer', 'refuse-answer', 'return', 'void', 'refund-part', 'refund-all', 'capture-part', 'capture-all',
  'release', 'recurring', 'retry', 'reconcile', 'capture-job', 'minutes', 'hours', 'day', 'chargeback-part', 'chargeback-all',
  'pay-applepay', 'pay-googlepay', 'status',
];
/** Money-moving operations weigh more than clock moves and jobs. */
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<Op>('pay', 'void', 'refund-part', 'refund-all', 'capture-part', 'capture-all', 'release', 'recurring', 'retry', 'chargeback-part', 'pay-applepay', 'pay-googlepay') },
  { weight: 1, arbitrary: fc.constantFrom(...OPS) },
);

/** The test cards a run pays with (docs/sandbox.md). */
const CARDS = { approve: '01/38', decline: '02/38', threeDs: '05/38', redirect: '12/38', noAnswer: '08/38', voidDeclined: '04/38', refundDeclined: '07/38' } as const;
/** The S2S CARD gateway's test cards (docs/acquirers/s2s-card.md). */
const S2S_CARDS = { approve: '01/38', decline: '02/38', captureDeclined: '03/38', threeDs: '05/38', threeDsDeclined: '06/38', redirect: '12/38', redirectDeclined: '12/39' } as const;

/**
 * A wallet token a run pays with: the sandbox's test tokens (docs/sandbox.md, "Wallet tokens"), which
 * the fake S2S CARD gateway decrypts too. The expiry picks the test card's outcome; a device token
 * (Apple Pay, Google Pay CRYPTOGRAM_3DS) has no 3-D Secure, Google Pay's PAN_ONLY gets the acquirer's.
 */
interface WalletPay {
  readonly wallet: Wallet;
  readonly expiry: string;
  readonly authMethod?: 'PAN_ONLY' | 'CRYPTOGRAM_3DS';
  /** A token the acquirer cannot read (decrypt): declined. */
  readonly unreadable?: true;
}
const WALLET_PAYS = {
  applePay: { wallet: 'applepay', expiry: '01/38' },
  googlePay: { wallet: 'googlepay', expiry: '01/38', authMethod: 'CRYPTOGRAM_3DS' },
  applePayDecline: { wallet: 'applepay', expiry: '02/38' },
  googlePayDecline: { wallet: 'googlepay', expiry: '02/38', authMethod: 'PAN_ONLY' },
  googlePayPanOnly3ds: { wallet: 'googlepay', expiry: '05/38', authMethod: 'PAN_ONLY' },
  googlePayPanOnly3dsDeclined: { wallet: 'googlepay', expiry: '06/38', authMethod: 'PAN_ONLY' },
  googlePayCryptogram3dsCard: { wallet: 'googlepay', expiry: '05/38', authMethod: 'CRYPTOGRAM_3DS' },
  applePayUnreadable: { wallet: 'applepay', expiry: '01/38', unreadable: true },
} as const satisfies Record<string, WalletPay>;
/** The sandbox's: the test cards' lost answer, bank redirect and declined follow-ups hold for a wallet's card too. */
const SANDBOX_WALLET_PAYS: Readonly<Record<string, WalletPay>> = {
  ...WALLET_PAYS,
  applePayNoAnswer: { wallet: 'applepay', expiry: '08/38' },
  googlePayRedirect: { wallet: 'googlepay', expiry: '12/38', authMethod: 'PAN_ONLY' },
  applePayVoidDeclined: { wallet: 'applepay', expiry: '04/38' },
  googlePayRefundDeclined: { wallet: 'googlepay', expiry: '07/38', authMethod: 'CRYPTOGRAM_3DS' },
};
/** The S2S CARD gateway's: its bank redirect, approved or declined, for a wallet's card too. */
const S2S_WALLET_PAYS: Readonly<Record<string, WalletPay>> = {
  ...WALLET_PAYS,
  applePayRedirect: { wallet: 'applepay', expiry: '12/38' },
  googlePayRedirectDeclined: { wallet: 'googlepay', expiry: '12/39', authMethod: 'CRYPTOGRAM_3DS' },
};

/** What the page posts for a wallet payment (the card shown is the test card VISA •1111). */
function walletFormOf(w: WalletPay): WalletForm {
  const shown = { wallet: w.wallet, network: 'VISA', last4: '1111' };
  return {
    ...shown,
    ...(w.wallet === 'googlepay' ? { authMethod: w.authMethod ?? 'CRYPTOGRAM_3DS' } : {}),
    paymentToken: w.unreadable ? '{"encrypted":"not a sandbox token"}' : sandboxWalletToken({ ...shown, expiry: w.expiry, ...(w.authMethod ? { authMethod: w.authMethod } : {}) }),
  };
}

interface Step {
  readonly op: Op;
  readonly fault?: Fault;
  /** Another operation racing this one. */
  readonly racing?: Op;
  readonly racingFault?: Fault;
}

// Most operations make one or two writes and one acquirer call: faults are aimed there, and most
// steps carry one (a fault aimed past an operation's last step does not fire).
const faultArbOf = (freq: number): fc.Arbitrary<Fault | undefined> =>
  fc.option(
    fc.record({ at: fc.constantFrom<'write' | 'acquirer'>('write', 'acquirer'), nth: fc.constantFrom(1, 1, 1, 2, 2, 3), when: fc.constantFrom<'before' | 'after'>('before', 'after') }),
    { freq },
  );
const faultArb = faultArbOf(5);
// On S2S CARD the gateway misbehaves on its own in every run: half the steps carry a fault of ours,
// so more payments live long enough to be captured, refunded in part and raced.
const s2sFaultArb = faultArbOf(2);
const stepArbOf = (ops: fc.Arbitrary<Op>, faults = faultArb): fc.Arbitrary<Step> =>
  fc.record({ op: ops, fault: faults, racing: fc.option(ops, { freq: 3 }), racingFault: faults })
    .map((s) => ({ op: s.op, ...(s.fault ? { fault: s.fault } : {}), ...(s.racing ? { racing: s.racing, ...(s.racingFault ? { racingFault: s.racingFault } : {}) } : {}) }));
const stepArb = stepArbOf(opArb);
/** S2S CARD: the same operations, plus the gateway catching up on what it held back. */
const s2sStepArb = stepArbOf(fc.oneof({ weight: 6, arbitrary: opArb }, { weight: 1, arbitrary: fc.constantFrom<Op>('gateway-catches-up', 'merchant-switches') }), s2sFaultArb);

/** The requests that move money, which a run's gateway may drop, answer late or lose the answer of. */
const MONEY_ACTIONS = ['SALE', 'RECURRING_SALE', 'CAPTURE', 'VOID', 'CREDITVOID'] as const;

/** One run's misbehaviour of the S2S CARD gateway, and how long our connector watches for a CREDITVOID callback. */
const gatewayArb = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  drop: fc.constantFrom(0, 0, 0.1),
  loseAnswer: fc.constantFrom(0, 0, 0.15, 0.35),
  slow: fc.constantFrom(0, 0, 0, 0.15),
  /** Lookups (GET_TRANS_*) lost too while the run goes on; never in the final reconcile. */
  lookupsLost: fc.constantFrom(0, 0, 0.1),
  callbacksLost: fc.constantFrom(0, 0, 0.25, 1),
  callbacksRepeated: fc.constantFrom(0, 0, 0.3),
  callbacksEarly: fc.constantFrom(0, 0, 0.5),
  callbackJitterMs: fc.constantFrom(0, 0, 0, 20),
  callbacksHeld: fc.boolean(),
  creditVoid: fc.constantFrom<GatewayAdversity['creditVoid']>('immediate', 'immediate', 'held', 15),
  // The connector polls its records every 150 ms while it waits: any wait costs 150 ms of real time
  // per refund, so one run in four waits (the callback answers at once) and the rest leave it to
  // the reconciler.
  followUpWaitMs: fc.constantFrom(0, 0, 0, 150),
});
export type GatewayScenario = typeof gatewayArb extends fc.Arbitrary<infer T> ? T : never;

const scenarioFields = {
  dms: fc.boolean(),
  recurringInit: fc.boolean(),
  canClose: fc.boolean(),
  recurringAmount: fc.constantFrom('5.00', '5.52', '5.51'),
  /** Every run starts with the customer paying (perhaps hit by a fault, perhaps raced), then random steps. */
  firstFault: faultArb,
};

/** What may race the customer's first submission: a second one (card, wallet), void, refund, status… */
const firstRacingArb = fc.option(fc.constantFrom<Op>('pay', 'pay-again', 'pay-applepay', 'pay-googlepay', 'void', 'refund-part', 'refund-all', 'status', 'return', 'reconcile'), { freq: 2, nil: undefined });

/**
 * The first payment's wallet token in one run of three (the card's otherwise). A wallet cannot pay a
 * recurring session or a merchant that captures later (docs/wallets.md), so such a run is one-stage
 * and not recurring: the refusals are reached by the wallet submissions of the other runs.
 */
const walletRunsOf = (keys: readonly string[]) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    // Approved tokens weigh more, as approved cards do on S2S CARD: most of what can go wrong happens after a payment is approved.
    { weight: 1, arbitrary: fc.constantFrom('applePay', 'googlePay') },
    { weight: 2, arbitrary: fc.constantFrom(...keys) },
  );
const withWalletRules = <S extends { wallet?: string | undefined; dms: boolean; recurringInit: boolean }>(s: S): S => (s.wallet ? { ...s, dms: false, recurringInit: false } : s);
const present = <S extends object>(s: S): S => Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)) as S;

// The sandbox's scenario, field for field in a fixed order (new fields go last), so a seed replays
// the same runs for as long as the operations drawn stay the same.
export const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  dms: scenarioFields.dms,
  card: fc.constantFrom<string>(...Object.keys(CARDS)),
  recurringInit: scenarioFields.recurringInit,
  canClose: scenarioFields.canClose,
  recurringAmount: scenarioFields.recurringAmount,
  firstFault: scenarioFields.firstFault,
  steps: fc.array(stepArb, { minLength: 1, maxLength: 14 }),
  wallet: walletRunsOf(Object.keys(SANDBOX_WALLET_PAYS)),
  firstRacing: firstRacingArb,
  firstRacingFault: faultArb,
}).map((s) => present(withWalletRules(s)));
export interface Scenario {
  readonly dms: boolean;
  readonly card: string;
  readonly recurringInit: boolean;
  readonly canClose: boolean;
  readonly recurringAmount: string;
  readonly firstFault?: Fault | undefined;
  readonly steps: Step[];
  /** The first payment (and every `pay` step) with this wallet token (a key of the connector's wallet pays) instead of the card. */
  readonly wallet?: string | undefined;
  /** An operation racing the first payment, and its fault. */
  readonly firstRacing?: Op | undefined;
  readonly firstRacingFault?: Fault | undefined;
  /** S2S CARD only: the gateway's misbehaviour in this run. */
  readonly gateway?: GatewayScenario;
}

/** The scenarios of the S2S CARD model: its cards, its extra step, and the gateway's misbehaviour. */
export const s2sScenarioArb: fc.Arbitrary<Scenario> = fc.record({
  ...scenarioFields,
  firstFault: s2sFaultArb,
  // Approved cards weigh more: most of what can go wrong happens after a payment is approved.
  card: fc.oneof({ weight: 2, arbitrary: fc.constant('approve') }, { weight: 3, arbitrary: fc.constantFrom<string>(...Object.keys(S2S_CARDS)) }),
  steps: fc.array(s2sStepArb, { minLength: 1, maxLength: 14 }),
  gateway: gatewayArb,
  wallet: walletRunsOf(Object.keys(S2S_WALLET_PAYS)),
  firstRacing: firstRacingArb,
  firstRacingFault: s2sFaultArb,
}).map((s) => present(withWalletRules(s)));

export const scenarioArbOf = (connector: Connector): fc.Arbitrary<Scenario> => (connector === 's2s-card' ? s2sScenarioArb : scenarioArb);

/** The adversity switches of the fake gateway for one run's draw. */
export function adversityOf(g: GatewayScenario): GatewayAdversity {
  const each = (p: number) => Object.fromEntries(MONEY_ACTIONS.map((a) => [a, p]));
  const lookups = { GET_TRANS_STATUS: g.lookupsLost, GET_TRANS_DETAILS: g.lookupsLost, GET_TRANS_STATUS_BY_ORDER: g.lookupsLost };
  return {
    drop: { ...each(g.drop), ...lookups },
    loseAnswer: each(g.loseAnswer),
    slow: each(g.slow),
    slowMs: SLOW_ANSWER_MS,
    callbacks: { lose: g.callbacksLost, repeat: g.callbacksRepeated, beforeAnswer: g.callbacksEarly, jitterMs: g.callbackJitterMs, hold: g.callbacksHeld },
    creditVoid: g.creditVoid,
  };
}

/**
 * The connector's client gives up after this long (in the model; the deployed default is 15 s), and
 * a slow answer comes after SLOW_ANSWER_MS: past the timeout, so the caller never sees it, at a
 * cost of a tenth of a second per slow answer instead of 15 s.
 */
const CLIENT_TIMEOUT_MS = 100;
const SLOW_ANSWER_MS = 250;

export interface ModelStats {
  runs: number;
  operations: number;
  /** Faults injected at step boundaries, plus (S2S CARD) the gateway's misbehaviour that happened. */
  faults: number;
  divergences: number;
  /** Payments that ended charged back (in part or in full): the runs reached chargebacks. */
  chargedBack?: number;
  /** S2S CARD: the gateway's misbehaviour by kind (`SALE answer lost`: 12, `callback lost`: 30…). */
  gatewayFaults?: Record<string, number>;
  /** S2S CARD: the gateway's transactions at the end of the runs by type and status (`refund/success`: 40): what the runs moved. */
  gatewayMoves?: Record<string, number>;
  /**
   * Wallet payments: submissions with a wallet's token (a refused one too), the faults that hit one
   * (ours at a step boundary of the submission; on S2S CARD the gateway's on a wallet SALE or on a
   * callback of one, already counted in `faults`), and payments a wallet paid by the end of their run.
   */
  wallets: { operations: number; faults: number; paid: number };
}

/**
 * Where a run keeps its payments: the DynamoDB store on the local engine (dynalite) as the service
 * does, or the in-memory store, which the store contract suite (test/contract/) holds to the same
 * behaviour and which costs no round trips. Everything else (the acquirer's ledger, tokens,
 * merchants, the S2S connector's records) stays where the service keeps it; a memory run puts its
 * store into the service's own dependencies for its duration, so what reaches the service over
 * HTTP (the S2S gateway's callbacks) records on the same payments.
 */
export type ModelStore = 'dynamodb' | 'memory';

/**
 * fast-check's options of a model property: the run count, the seed to replay (MONEY_MODEL_SEED),
 * and a bound on the whole property. A failing run is shrunk, and every shrink step replays whole
 * runs on stores that keep growing: without a bound a failure could shrink for longer than the
 * test's timeout and be reported as a timeout with neither seed nor scenario. After the bound the
 * smallest failing scenario found so far is reported, with its seed and path.
 */
export const modelCheckOptions = (runs: number) => ({
  numRuns: runs,
  seed: process.env.MONEY_MODEL_SEED ? Number(process.env.MONEY_MODEL_SEED) : undefined,
  interruptAfterTimeLimit: Math.max(8 * 60_000, runs * 4_000),
  markInterruptAsFailure: true,
});

/**
 * How a money model test file splits its runs: most on the memory store, a share on dynalite; a
 * soak (SOAK=1, or MONEY_MODEL_RUNS for a count of one's own) runs every one of its runs on dynalite.
 */
export function modelRuns(env: NodeJS.ProcessEnv = process.env): { memory: number; dynamodb: number } {
  if (env.MONEY_MODEL_RUNS || soaking(env)) return { memory: 0, dynamodb: soakCount({ fast: 200, soak: 200, override: 'MONEY_MODEL_RUNS' }, env) };
  return { memory: Number(env.MONEY_MODEL_MEMORY_RUNS ?? 50), dynamodb: Number(env.MONEY_MODEL_DYNAMODB_RUNS ?? 10) };
}

export interface MoneyModel {
  readonly stats: ModelStats;
  /** One run: a payment (and its recurring children) through the steps, then the jobs, then the check. */
  run(s: Scenario, options?: { readonly store?: ModelStore }): Promise<Divergence[]>;
  /** The payments the last run checked. */
  readonly lastRun: readonly string[];
  /** Checks one payment of a dynalite run again, as a run's end does (for tests of the checker itself). */
  check(paymentId: string): Promise<Divergence[]>;
  readonly service: TestService;
  /** S2S CARD: the fake gateway. */
  readonly gateway?: FakeGateway;
  close(): Promise<void>;
}

/**
 * The service in this process on a manual clock, with an SMS and a DMS merchant; on `s2s-card`,
 * paying through the connector against a fake gateway whose callbacks come to the service over HTTP.
 */
export async function startMoneyModel(options: { connector?: Connector } = {}): Promise<MoneyModel> {
  const connector = options.connector ?? 'sandbox';
  const clock = new ManualClock(T0);
  // The gateway's challenges expire on the model's clock, as the link and the reconciler's timers do.
  const gateway = connector === 's2s-card' ? await startFakeGateway({ now: () => clock.now().getTime(), challengeExpiryMs: 20 * MINUTE }) : undefined;
  let service: TestService;
  try {
    service = await startTestService({
      clock,
      ...(gateway
        ? {
            env: {
              ACQUIRER: 's2s-card',
              S2S_CARD_URL: gateway.url,
              S2S_CARD_CLIENT_KEY: gateway.clientKey,
              S2S_CARD_PASSWORD: gateway.password,
              S2S_CARD_TIMEOUT_MS: '500',
              S2S_CARD_FOLLOW_UP_WAIT_MS: '0',
              // The id the stage's account is known by to Google Pay: without one an S2S CARD stage takes no Google Pay.
              GOOGLE_PAY_GATEWAY: 'modelgateway',
            },
          }
        : {}),
    });
  } catch (e) {
    await gateway?.close();
    throw e;
  }
  if (gateway) gateway.notifyUrl = `${service.baseUrl}/acquirer/s2s-card/notify`;
  // Both merchants have the wallets on (the DMS one refuses them, as docs/wallets.md says); Apple Pay
  // validates with the stage's merchant identifier.
  const wallets = { wallets: ['applepay', 'googlepay'] as Wallet[], googlePayGatewayMerchantId: 'modelGatewayMerchantId' };
  const sms = await service.createMerchant({ name: 'Model Shop', settings: wallets });
  const dms = await service.createMerchant({ name: 'Model DMS Shop', settings: { dms: true, autoCaptureDelayMinutes: 90, ...wallets } });
  const stats: ModelStats = { runs: 0, operations: 0, faults: 0, divergences: 0, wallets: { operations: 0, faults: 0, paid: 0 }, ...(gateway ? { gatewayFaults: gateway.faults } : {}) };
  const lastRun: string[] = [];
  // The shard counts of the service's own table (the local engine's), so a job's part reads the same payments on both stores.
  const memory = new MemoryPaymentStore(LOCAL_SHARDS);
  return {
    stats,
    lastRun,
    service,
    ...(gateway ? { gateway } : {}),
    check: (id) => checkOne(service, service.deps.store, gateway, id),
    run: async (s, options = {}) => {
      if (options.store !== 'memory') return runScenario({ service, clock, sms, dms, stats, gateway, lastRun, store: service.deps.store }, s);
      const serviceDeps = service.deps;
      setDeps({ ...serviceDeps, store: memory });
      try {
        return await runScenario({ service, clock, sms, dms, stats, gateway, lastRun, store: memory }, s);
      } finally {
        setDeps(serviceDeps);
      }
    },
    close: async () => {
      await gateway?.close();
      await service.close();
    },
  };
}

async function runScenario(
  { service, clock, sms, dms, stats, gateway, lastRun, store }: { service: TestService; clock: ManualClock; sms: MerchantCredentials; dms: MerchantCredentials; stats: ModelStats; gateway: FakeGateway | undefined; lastRun: string[]; store: PaymentStore },
  s: Scenario,
): Promise<Divergence[]> {
  const merchant = s.dms ? dms : sms;
  const recurringInit = s.recurringInit && !s.dms;
  const body = validateCreateSession(validSessionBody(merchant.merchant_key, {
    order: { number: `model-${stats.runs}`, amount: '10.00', currency: 'USD', description: 'Model order' },
    ...(recurringInit ? { recurring_init: true } : {}),
    session_expiry: 30,
    hash: 'signed-at-the-edge',
  }));
  const serviceDeps = { ...(service.deps as Deps), store };
  // S2S CARD: this run's connector (a short client timeout, the run's wait for a CREDITVOID callback)
  // over the service's own settings and records, and this run's misbehaviour of the gateway.
  const s2s = gateway && s.gateway && serviceDeps.s2sCard;
  const base: Deps = s2s
    ? {
        ...serviceDeps,
        acquirer: new S2SCardAcquirer({ ...s2s.settings, timeoutMs: CLIENT_TIMEOUT_MS }, s2s.records, { followUpWaitMs: s.gateway!.followUpWaitMs, clock }),
      }
    : serviceDeps;
  if (gateway && s.gateway) {
    gateway.adversity = adversityOf(s.gateway);
    gateway.reseed(s.gateway.seed);
  }
  const gatewayFaultsBefore = gateway ? Object.values(gateway.faults).reduce((n, x) => n + x, 0) : 0;
  const gatewayWalletFaultsBefore = gateway ? walletFaultsOf(gateway.faults) : 0;
  const gatewayBefore = new Set(gateway?.paymentIds() ?? []);
  // An acquirer that cannot close is the sandbox's variant. The S2S CARD connector's close is what it
  // is: it bars locally what the gateway says it never received (the gateway itself closes nothing),
  // and that is the deployed behaviour the model must check, not a weaker one.
  const acquirer = s.canClose || gateway ? base.acquirer : withoutClose(base.acquirer);
  const session = await createSession(base, merchant.merchant_key, sessionCommandOf(body));
  const token = session.linkToken;
  const paymentIds = new Set([session.paymentId]);
  let recurringCount = 0;
  /** Whether the merchant's capture mode is the other one now (restored at the end of the run). */
  let switched = false;

  const read = async (id = session.paymentId): Promise<Payment> => (await base.store.findPayment(id)) as Payment;
  const depsWith = (fault: Fault | undefined) => {
    const parts = withFault(base.store, acquirer, fault);
    return { deps: { ...base, store: parts.store, acquirer: parts.acquirer } as Deps, parts };
  };

  const walletPays = gateway ? S2S_WALLET_PAYS : SANDBOX_WALLET_PAYS;
  const stageWallets = pageWalletsOf(serviceDeps.config);
  /** The wallet token an operation pays with; undefined for a card (or no payment). */
  const walletOf = (op: Op): WalletPay | undefined =>
    op === 'pay' && s.wallet ? walletPays[s.wallet] : op === 'pay-applepay' ? WALLET_PAYS.applePay : op === 'pay-googlepay' ? WALLET_PAYS.googlePayPanOnly3ds : undefined;

  const perform = async (op: Op, fault: Fault | undefined): Promise<void> => {
    const { deps, parts } = depsWith(fault);
    const mk = merchant.merchant_key;
    const p = await read();
    const cards: Record<string, string> = gateway ? S2S_CARDS : CARDS;
    const card = op === 'pay-again' ? cards.approve! : cards[s.card]!;
    const wallet = walletOf(op);
    try {
      switch (op) {
        case 'pay':
        case 'pay-again':
        case 'pay-applepay':
        case 'pay-googlepay': {
          // The gateway requires the payer's IP (the page takes it from the request); a wallet is paid with the stage's wallets, as the page's route does.
          const ctx = { baseUrl: 'http://checkout.test', browser: gateway ? { ip: '198.51.100.7' } : {}, wallets: stageWallets };
          if (wallet) await payWithWallet(deps, token, walletFormOf(wallet), ctx);
          else await pay(deps, token, { number: TEST_PAN, expiry: card, cvv: '123', holder: 'Model Customer' }, ctx);
          break;
        }
        case 'status': {
          // Reads only, as the status route and the processing page's poll make them, racing the writes.
          const { payment, now } = await paymentStatus(deps, mk, { paymentId: p.paymentId });
          toStatusResponse(payment, now);
          await attemptState(deps, token);
          break;
        }
        case 'answer':
        case 'refuse-answer':
          if (p.action && gateway) {
            const t = gateway.byOrder(p.action.idempotencyKey);
            if (t) await gateway.answerChallenge(t.transId, op === 'answer');
          } else if (p.action) await base.sandbox.challenges.answerChallenge(p.action.idempotencyKey, { code: SANDBOX_OTP, confirm: op === 'answer' });
          break;
        case 'gateway-catches-up':
          gateway?.finishWaiting();
          await gateway?.deliverCallbacks();
          break;
        case 'merchant-switches':
          switched = !switched;
          await updateMerchantSettings(base, mk, { dms: s.dms !== switched });
          break;
        case 'return':
          await completeAction(deps, token);
          break;
        case 'void':
          await voidOwnPayment(deps, mk, { payment_id: p.paymentId });
          break;
        case 'refund-part':
          await refundPayment(deps, mk, { payment_id: p.paymentId, amount: '3.00' });
          break;
        case 'refund-all':
          await refundPayment(deps, mk, { payment_id: p.paymentId, amount: '10.00' });
          break;
        case 'capture-part':
          await capture(deps, { payment: p, amountMinor: 600, actor: 'merchant:model' });
          break;
        case 'capture-all':
          await capture(deps, { payment: p, amountMinor: 1000, actor: 'merchant:model' });
          break;
        case 'release':
          await release(deps, p, 'operator:model');
          break;
        case 'recurring': {
          if (!p.recurringToken || !p.recurringInitTransId) break;
          const number = `model-${stats.runs}-r${recurringCount++ % 2}`;
          const answer = await chargeRecurring(deps, mk, {
            merchant_key: mk,
            recurring_init_trans_id: p.recurringInitTransId,
            recurring_token: p.recurringToken,
            hash: '',
            order: { number, amount: s.recurringAmount, description: 'Model renewal' },
          });
          paymentIds.add(answer.payment_id);
          break;
        }
        case 'retry':
          for (const id of [...paymentIds].filter((id) => id !== session.paymentId)) await retryOwnPayment(deps, mk, { payment_id: id });
          break;
        case 'chargeback-part':
        case 'chargeback-all': {
          // At the acquirer, whatever our records say: of every payment of the run it settled.
          const amount = op === 'chargeback-part' ? 250 : undefined;
          for (const id of paymentIds) {
            if (gateway) {
              for (const t of gateway.ledgerOf(id)) if (t.status === 'SETTLED' || t.status === 'CHARGEBACK') gateway.chargeback(t.transId, amount);
            } else await base.sandbox.raiseChargeback(id, amount);
          }
          break;
        }
        case 'reconcile':
          await reconcileDue(deps);
          break;
        case 'capture-job':
          await runCaptureJob(deps);
          break;
        case 'minutes':
          clock.advance(7 * MINUTE);
          break;
        case 'hours':
          clock.advance(6 * 60 * MINUTE);
          break;
        case 'day':
          clock.advance(25 * 60 * MINUTE);
          break;
      }
    } catch {
      // A refusal (4xx), or the simulated crash: the request is over either way.
    } finally {
      stats.operations++;
      if (parts.fired()) stats.faults++;
      if (wallet) {
        stats.wallets.operations++;
        if (parts.fired()) stats.wallets.faults++;
      }
    }
  };

  const first: Step = { op: 'pay', ...(s.firstFault ? { fault: s.firstFault } : {}), ...(s.firstRacing ? { racing: s.firstRacing, ...(s.firstRacingFault ? { racingFault: s.firstRacingFault } : {}) } : {}) };
  const steps: Step[] = [first, ...s.steps];
  for (const step of steps) {
    if (step.racing) await Promise.all([perform(step.op, step.fault), perform(step.racing, step.racingFault)]);
    else await perform(step.op, step.fault);
  }

  // The customer is gone and the jobs run (with the run's acquirer, no more faults) until nothing is
  // due: time moves past every timeout, the watch period of late approvals and the auto-capture.
  // Each job reads only the work index shards this run's payments are in (a worker's part, as a
  // deployed job's workers split them): every due item of theirs, without a query of every shard per job run.
  const shards = [...new Set([...paymentIds].map((id) => shardOf(id, LOCAL_SHARDS.work)))];
  const jobsDrain = async <T>(job: (part: ShardPart) => Promise<T>) => {
    for (const index of shards) await job({ index, of: LOCAL_SHARDS.work });
  };
  // The reconcile job's first worker also takes the acquirer's dispute report (the sandbox's).
  const reconcileParts = [...new Set([0, ...shards])];
  if (gateway) {
    // The gateway carries out what it kept waiting and sends what it held back (the lost stay
    // lost), then answers every request: the final reconcile is not itself faulted, as in the sandbox.
    gateway.finishWaiting();
    await gateway.deliverCallbacks();
    gateway.adversity = wellBehaved();
  }
  for (let round = 0; round < 12; round++) {
    clock.advance(round < 6 ? 16 * MINUTE : 6 * 60 * MINUTE);
    const deps = { ...base, acquirer } as Deps;
    for (const index of reconcileParts) await reconcileDue(deps, { part: { index, of: LOCAL_SHARDS.work } });
    await jobsDrain((part) => runCaptureJob(deps, { part }));
    for (const index of reconcileParts) await reconcileDue(deps, { part: { index, of: LOCAL_SHARDS.work } });
  }

  const divergences: Divergence[] = [];
  const touched = new Set(paymentIds);
  if (gateway) {
    // Every payment this run touched at the gateway, known to us or not (a recurring charge whose
    // answer a fault cut off is never handed back to the merchant, but the gateway may have it).
    await gateway.deliverCallbacks();
    const ours = new Set([...paymentIds].map((id) => id.toLowerCase()));
    for (const id of gateway.paymentIds()) if (!gatewayBefore.has(id) && !ours.has(id.toLowerCase())) touched.add(id);
    stats.faults += Object.values(gateway.faults).reduce((n, x) => n + x, 0) - gatewayFaultsBefore;
    stats.wallets.faults += walletFaultsOf(gateway.faults) - gatewayWalletFaultsBefore;
    const moves = (stats.gatewayMoves ??= {});
    for (const id of touched) {
      for (const t of gateway.ledgerOf(id)) for (const i of t.transactions) moves[`${i.type}/${i.status}`] = (moves[`${i.type}/${i.status}`] ?? 0) + 1;
    }
  }
  for (const id of touched) {
    divergences.push(...(await checkOne(service, store, gateway, id)));
    const p = await store.findPayment(id);
    if (p?.chargedBackMinor) stats.chargedBack = (stats.chargedBack ?? 0) + 1;
    if (p?.wallet && p.paidAt) stats.wallets.paid++;
  }
  lastRun.splice(0, lastRun.length, ...touched);
  if (switched) await updateMerchantSettings(serviceDeps, merchant.merchant_key, { dms: s.dms });
  stats.runs++;
  stats.divergences += divergences.length;
  return divergences;
}


/** The fake gateway's misbehaviour on wallet SALEs and their callbacks (its kinds `wallet SALE answer lost`, `wallet callback lost`…). */
const walletFaultsOf = (faults: Record<string, number>): number => Object.entries(faults).reduce((n, [kind, x]) => n + (kind.startsWith('wallet ') ? x : 0), 0);

/** One payment of ours against the acquirer's ledger of it (the sandbox's, or the fake gateway's). */
async function checkOne(service: TestService, store: PaymentStore, gateway: FakeGateway | undefined, id: string): Promise<Divergence[]> {
  const p = await store.findPayment(id);
  if (!gateway) return p ? checkPayment(p, await sandboxLedger(service.deps.db, service.backend.tableName, id), { settled: true }) : [];
  const ledger = gateway.ledgerOf(id);
  if (!p) {
    const held = ledger.reduce((n, t) => n + gatewayHolds(t), 0);
    return held ? [{ paymentId: id, problem: `the gateway holds ${held} for a payment we have no record of` }] : [];
  }
  return checkAgainstGateway(p, ledger, { settled: true });
}
