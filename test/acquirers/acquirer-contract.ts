import { randomUUID } from 'node:crypto';
import type { Acquirer, AcquirerOutcome, AuthorizeRequest, FollowUpOutcome, FollowUpRequest } from '../../lambdas/ports/acquirer';
import { sandboxWalletToken } from '../../lambdas/adapters/sandbox-acquirer/wallet-token';
import type { Wallet } from '../../lambdas/domain/wallet';

/**
 * The contract every acquirer connector passes (docs/architecture.md, "Acquirers"): every operation
 * and outcome of the port, idempotent replays, lost answers found again by lookup, keys never
 * received closed for good. A connector's test file supplies a harness and calls this; adding a
 * third connector means passing it. Both connectors share the platform's test cards (4111… with the
 * expiry month of 2038 choosing the outcome).
 */
export interface AcquirerHarness {
  readonly acquirer: Acquirer;
  /** The customer's answer on the 3-D Secure or bank page of an `action` outcome. */
  answerChallenge(key: string, action: Extract<AcquirerOutcome, { kind: 'action' }>, confirm: boolean): Promise<void>;
  /** Makes the answer to the next authorization get lost, though the acquirer carries it out; returns the request to send. */
  loseNextAnswer(request: AuthorizeRequest): Promise<AuthorizeRequest>;
  /** Whether `close` can end a challenge the customer left (else it answers `action` and a late approval is reversed later). */
  readonly closesChallenges: boolean;
}

export const TEST_PAN = '4111111111111111';

export function cardRequest(month: number, overrides: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  const paymentId = `pay_${randomUUID().replace(/-/g, '')}`;
  return {
    idempotencyKey: `${paymentId}.1`,
    paymentId,
    amountMinor: 1000,
    currency: 'EUR',
    capture: true,
    instrument: { kind: 'card', card: { pan: TEST_PAN, expMonth: month, expYear: 2038, cvv: '123', holder: 'Jane Roe' } },
    browser: { ip: '203.0.113.7' },
    returnUrl: 'http://127.0.0.1:1/auth/token/complete',
    storeCredential: false,
    recurring: false,
    attempt: 1,
    payer: { email: 'jane.roe@example.com', name: 'Jane Roe', country: 'DE', city: 'Berlin', address: 'Street 1', zip: '10115', phone: '+49301234567' },
    description: 'Order 1',
    ...overrides,
  };
}

/**
 * A wallet payment with a test card's token (docs/sandbox.md, "Wallet tokens"; the fake S2S CARD
 * gateway reads the same tokens): `PAN_ONLY` is the card's own number (fpan), `CRYPTOGRAM_3DS` a
 * device's with its cryptogram (dpan).
 */
export function walletRequest(month: number, authMethod: 'PAN_ONLY' | 'CRYPTOGRAM_3DS', wallet: Wallet = 'googlepay', overrides: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  const paymentToken = sandboxWalletToken({ wallet, network: 'VISA', last4: '1111', expiry: `${String(month).padStart(2, '0')}/38`, authMethod });
  return cardRequest(month, {
    instrument: { kind: 'wallet', wallet: { wallet, panType: authMethod === 'PAN_ONLY' ? 'fpan' : 'dpan', brand: 'visa', last4: '1111', paymentToken } },
    ...overrides,
  });
}

const followUp = (auth: AuthorizeRequest, outcome: AcquirerOutcome, kind: string, amountMinor: number): FollowUpRequest => ({
  idempotencyKey: `${auth.paymentId}.${kind}.${randomUUID()}`,
  paymentId: auth.paymentId,
  authorization: { idempotencyKey: auth.idempotencyKey, acquirerRef: outcome.acquirerRef },
  amountMinor,
  currency: auth.currency,
});

const approvedRef = (o: AcquirerOutcome | FollowUpOutcome | undefined) => {
  expect(o?.kind).toBe('approved');
  return o!.acquirerRef;
};

export function acquirerContract(name: string, harness: () => AcquirerHarness): void {
  describe(`${name} passes the acquirer contract`, () => {
    let h: AcquirerHarness;
    beforeAll(() => {
      h = harness();
    });

    test('a sale is approved once: a replay of its key gets the same answer and lookup finds it', async () => {
      const request = cardRequest(1);
      const first = await h.acquirer.authorize(request);
      const ref = approvedRef(first);
      expect(await h.acquirer.authorize(request)).toEqual(first);
      expect(await h.acquirer.authorize({ ...request, idempotencyKey: request.idempotencyKey.toUpperCase() })).toEqual(first);
      expect((await h.acquirer.lookup(request))?.acquirerRef).toBe(ref);
    });

    test('a declined card is declined with a reason, and stays declined on replay', async () => {
      const request = cardRequest(2);
      const first = await h.acquirer.authorize(request);
      expect(first.kind).toBe('declined');
      expect((first as { reason: string }).reason).toEqual(expect.any(String));
      expect(await h.acquirer.authorize(request)).toEqual(first);
      expect((await h.acquirer.lookup(request))?.kind).toBe('declined');
    });

    test('an invalid amount is declined and moves no money', async () => {
      expect((await h.acquirer.authorize(cardRequest(1, { amountMinor: 0 }))).kind).toBe('declined');
    });

    test('DMS: an auth is captured once, then refunded in parts up to what was captured', async () => {
      const auth = cardRequest(1, { capture: false });
      const outcome = await h.acquirer.authorize(auth);
      approvedRef(outcome);
      const capture = followUp(auth, outcome, 'capture', 1000);
      const captured = await h.acquirer.capture(capture);
      approvedRef(captured);
      expect(await h.acquirer.capture(capture)).toEqual(captured);
      expect((await h.acquirer.lookup(capture))?.kind).toBe('approved');
      expect((await h.acquirer.capture(followUp(auth, outcome, 'capture', 1000))).kind).toBe('declined');
      approvedRef(await h.acquirer.refund(followUp(auth, outcome, 'refund', 400)));
      approvedRef(await h.acquirer.refund(followUp(auth, outcome, 'refund', 600)));
      expect((await h.acquirer.refund(followUp(auth, outcome, 'refund', 1))).kind).toBe('declined');
    });

    test('a capture above the authorized amount is declined, and the capture-decline card declines captures', async () => {
      const auth = cardRequest(1, { capture: false });
      const outcome = await h.acquirer.authorize(auth);
      expect((await h.acquirer.capture(followUp(auth, outcome, 'capture', 1001))).kind).toBe('declined');
      const declining = cardRequest(3, { capture: false });
      const held = await h.acquirer.authorize(declining);
      approvedRef(held);
      expect((await h.acquirer.capture(followUp(declining, held, 'capture', 1000))).kind).toBe('declined');
    });

    test('a sale is voided, and nothing is refunded after the void', async () => {
      const sale = cardRequest(1);
      const outcome = await h.acquirer.authorize(sale);
      const voiding = followUp(sale, outcome, 'void', 1000);
      approvedRef(await h.acquirer.void(voiding));
      expect((await h.acquirer.void(voiding)).kind).toBe('approved');
      expect((await h.acquirer.refund(followUp(sale, outcome, 'refund', 100))).kind).toBe('declined');
    });

    test('an uncaptured auth is released by a reversal and cannot be captured afterwards', async () => {
      const auth = cardRequest(1, { capture: false });
      const outcome = await h.acquirer.authorize(auth);
      approvedRef(await h.acquirer.reverse(followUp(auth, outcome, 'reversal', 1000)));
      expect((await h.acquirer.capture(followUp(auth, outcome, 'capture', 1000))).kind).toBe('declined');
    });

    test('a whole sale is reversed', async () => {
      const sale = cardRequest(1);
      const outcome = await h.acquirer.authorize(sale);
      approvedRef(await h.acquirer.reverse(followUp(sale, outcome, 'reversal', 1000)));
    });

    test.each([
      ['3-D Secure passed', 5, '3ds', true, 'approved'],
      ['3-D Secure failed', 6, '3ds', true, 'declined'],
      ['3-D Secure refused by the customer', 5, '3ds', false, 'declined'],
      ['bank redirect confirmed', 12, 'redirect', true, 'approved'],
    ] as const)('%s: action first, the result after the customer comes back', async (_name, month, flow, confirm, result) => {
      const request = cardRequest(month);
      const first = await h.acquirer.authorize(request);
      expect(first).toMatchObject({ kind: 'action', flow, url: expect.stringMatching(/^https?:\/\//) });
      expect((await h.acquirer.completeAction(request)).kind).toBe('action');
      await h.acquirer.authorize(request).then((again) => expect(again.kind).toBe('action'));
      await h.answerChallenge(request.idempotencyKey, first as Extract<AcquirerOutcome, { kind: 'action' }>, confirm);
      expect((await h.acquirer.completeAction(request)).kind).toBe(result);
      expect((await h.acquirer.lookup(request))?.kind).toBe(result);
    });

    test('a challenge left unanswered: close ends it, or says it cannot', async () => {
      const request = cardRequest(5);
      const first = await h.acquirer.authorize(request);
      expect(first.kind).toBe('action');
      const closed = await h.acquirer.close(request);
      expect(closed.kind).toBe(h.closesChallenges ? 'declined' : 'action');
    });

    test('a card kept for later pays a merchant-initiated charge', async () => {
      const first = cardRequest(1, { storeCredential: true });
      const outcome = await h.acquirer.authorize(first);
      expect(outcome.kind).toBe('approved');
      const stored = (outcome as { storedCredentialRef?: string }).storedCredentialRef;
      expect(stored).toEqual(expect.any(String));
      const paymentId = `pay_${randomUUID().replace(/-/g, '')}`;
      const charge = cardRequest(1, {
        paymentId,
        idempotencyKey: `${paymentId}.1`,
        instrument: { kind: 'stored', storedCredentialRef: stored!, summary: { mask: '411111****1111', brand: 'visa', expMonth: 1, expYear: 2038 } },
        recurring: true,
        payer: undefined,
        amountMinor: 500,
      });
      approvedRef(await h.acquirer.authorize(charge));
      expect((await h.acquirer.authorize(charge)).kind).toBe('approved');
    });

    test('an answer lost on the way is found by lookup and by a replay of the request', async () => {
      const request = await h.loseNextAnswer(cardRequest(1));
      const first = await h.acquirer.authorize(request).catch((): AcquirerOutcome => ({ kind: 'unknown', acquirerRef: '', reason: 'no answer' }));
      expect(first.kind).toBe('unknown');
      const found = await h.acquirer.lookup(request);
      expect(found?.kind).toBe('approved');
      expect(await h.acquirer.authorize(request)).toEqual(found);
      expect(await h.acquirer.close(request)).toEqual(found);
    });

    describe('wallet payments (Apple Pay, Google Pay)', () => {
      test('a wallet sale is approved once, found by lookup, and refunded in parts like a card sale', async () => {
        const sale = walletRequest(1, 'CRYPTOGRAM_3DS', 'applepay');
        const first = await h.acquirer.authorize(sale);
        approvedRef(first);
        expect(first).not.toHaveProperty('storedCredentialRef');
        expect(await h.acquirer.authorize(sale)).toEqual(first);
        expect((await h.acquirer.lookup(sale))?.kind).toBe('approved');
        approvedRef(await h.acquirer.refund(followUp(sale, first, 'refund', 400)));
        approvedRef(await h.acquirer.refund(followUp(sale, first, 'refund', 600)));
        expect((await h.acquirer.refund(followUp(sale, first, 'refund', 1))).kind).toBe('declined');
      });

      test('a wallet keeps nothing for later, whatever is asked: it is virtual', async () => {
        const outcome = await h.acquirer.authorize(walletRequest(1, 'CRYPTOGRAM_3DS', 'googlepay', { storeCredential: true }));
        expect(outcome.kind).toBe('approved');
        expect(outcome).not.toHaveProperty('storedCredentialRef');
      });

      test.each([
        ['the decline card declines, with the card or the device number', 2, 'PAN_ONLY', 'declined'],
        ['a device number with its cryptogram skips the 3-D Secure card\'s challenge', 5, 'CRYPTOGRAM_3DS', 'approved'],
        ['a device number of the 3-D Secure failure card is declined at once', 6, 'CRYPTOGRAM_3DS', 'declined'],
      ] as const)('%s', async (_name, month, authMethod, result) => {
        const request = walletRequest(month, authMethod);
        expect((await h.acquirer.authorize(request)).kind).toBe(result);
        expect((await h.acquirer.lookup(request))?.kind).toBe(result);
      });

      test('PAN_ONLY (fpan) on the 3-D Secure card: a challenge first, approved after the customer passes it', async () => {
        const request = walletRequest(5, 'PAN_ONLY');
        const first = await h.acquirer.authorize(request);
        expect(first).toMatchObject({ kind: 'action', flow: '3ds' });
        await h.answerChallenge(request.idempotencyKey, first as Extract<AcquirerOutcome, { kind: 'action' }>, true);
        expect((await h.acquirer.completeAction(request)).kind).toBe('approved');
      });

      test('a token the acquirer cannot read is declined', async () => {
        const request = walletRequest(1, 'CRYPTOGRAM_3DS');
        if (request.instrument.kind !== 'wallet') throw new Error('a wallet request');
        const unreadable: AuthorizeRequest = { ...request, instrument: { kind: 'wallet', wallet: { ...request.instrument.wallet, paymentToken: '{"not":"a token"}' } } };
        expect((await h.acquirer.authorize(unreadable)).kind).toBe('declined');
      });
    });

    test('a key never received: lookup knows nothing, close declines it, a late request with it is declined', async () => {
      const request = cardRequest(1);
      expect(await h.acquirer.lookup(request)).toBeUndefined();
      expect((await h.acquirer.close(request)).kind).toBe('declined');
      expect((await h.acquirer.authorize(request)).kind).toBe('declined');
      expect((await h.acquirer.lookup(request))?.kind).toBe('declined');
      const follow = followUp(request, { kind: 'approved', acquirerRef: 'x' }, 'refund', 100);
      expect(await h.acquirer.lookup(follow)).toBeUndefined();
      expect((await h.acquirer.close(follow)).kind).toBe('declined');
    });
  });
}
