import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CardSummary } from '../../domain/card';
import type { Acquirer, AcquirerOutcome, AuthorizeRequest, FollowUpOutcome, FollowUpRequest } from '../../ports/acquirer';
import { SANDBOX_OTP, SANDBOX_REASONS, planAuthorization, planFollowUp, planRecurring, type FollowUpKind } from './rules';
import { isConditionFailure } from '../dynamodb/client';

type CardFacts = Pick<CardSummary, 'mask' | 'expMonth' | 'expYear'>;

/** What the simulated acquirer remembers of one attempt, keyed by our idempotency key. */
interface LedgerEntry {
  readonly idempotencyKey: string;
  readonly acquirerRef: string;
  readonly card: CardFacts;
  readonly amountMinor: number;
  readonly currency: string;
  readonly returnUrl?: string;
  /** The answer given; for a challenge, the answer once the customer has finished it. */
  readonly outcome: AcquirerOutcome | FollowUpOutcome;
  readonly pending?: { readonly flow: '3ds' | 'redirect'; readonly then: 'approve' | 'decline' };
  /** An answer the acquirer has but did not deliver (a timeout); lookup returns it. */
  readonly undelivered?: AcquirerOutcome;
  readonly storedCredentialRef?: string;
}

const ledgerKey = (idempotencyKey: string) => ({ pk: `SANDBOX#${idempotencyKey}`, sk: 'ATTEMPT' });
const credentialKey = (ref: string) => ({ pk: `SANDBOX-CREDENTIAL#${ref}`, sk: 'CREDENTIAL' });

/**
 * A simulated acquirer with the platform's test cards. Its memory (attempts, challenges, stored
 * credentials) lives in the service's table under its own keys, as a real acquirer's would live
 * on its side. It never sees more of a card than a CardSummary after the request.
 */
export class SandboxAcquirer implements Acquirer {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async authorize(request: AuthorizeRequest): Promise<AcquirerOutcome> {
    const existing = await this.entry(request.idempotencyKey);
    if (existing) return existing.outcome as AcquirerOutcome;
    const acquirerRef = `sbx_${randomUUID().replace(/-/g, '')}`;
    const card = await this.cardOf(request);
    if (!card) {
      return this.record(request, { mask: '', expMonth: 0, expYear: 0 }, { kind: 'declined', acquirerRef, reason: SANDBOX_REASONS.recurringUnavailable });
    }
    if (request.instrument.kind === 'stored' && request.recurring) {
      const plan = planRecurring(card, request.amountMinor, request.attempt);
      const outcome: AcquirerOutcome = plan.kind === 'approve' ? { kind: 'approved', acquirerRef } : { kind: 'declined', acquirerRef, reason: plan.reason, soft: plan.soft };
      return this.record(request, card, outcome);
    }
    const plan = planAuthorization(card);
    switch (plan.kind) {
      case 'approve':
        return this.record(request, card, await this.approved(acquirerRef, card, request.storeCredential));
      case 'decline':
        return this.record(request, card, { kind: 'declined', acquirerRef, reason: plan.reason });
      case 'challenge': {
        const url = `${new URL(request.returnUrl).origin}/sandbox/challenge/${encodeURIComponent(request.idempotencyKey)}`;
        return this.record(request, card, { kind: 'action', acquirerRef, flow: plan.flow, url }, { flow: plan.flow, then: plan.then });
      }
      case 'no-answer': {
        const later = await this.approved(acquirerRef, card, request.storeCredential);
        await this.record(request, card, { kind: 'unknown', acquirerRef, reason: SANDBOX_REASONS.unknown }, undefined, later);
        return { kind: 'unknown', acquirerRef, reason: SANDBOX_REASONS.unknown };
      }
    }
  }

  async completeAction(idempotencyKey: string): Promise<AcquirerOutcome> {
    const entry = await this.entry(idempotencyKey);
    if (!entry) throw new Error(`sandbox: no attempt ${idempotencyKey}`);
    return entry.outcome as AcquirerOutcome;
  }

  async lookup(idempotencyKey: string): Promise<AcquirerOutcome | undefined> {
    const entry = await this.entry(idempotencyKey);
    return entry ? (entry.undelivered ?? (entry.outcome as AcquirerOutcome)) : undefined;
  }

  capture(request: FollowUpRequest): Promise<FollowUpOutcome> {
    return this.followUp('capture', request);
  }

  void(request: FollowUpRequest): Promise<FollowUpOutcome> {
    return this.followUp('void', request);
  }

  refund(request: FollowUpRequest): Promise<FollowUpOutcome> {
    return this.followUp('refund', request);
  }

  /** What the simulated challenge page shows: the flow, or undefined when nothing is pending. */
  async challenge(idempotencyKey: string): Promise<{ flow?: '3ds' | 'redirect'; returnUrl: string } | undefined> {
    const entry = await this.entry(idempotencyKey);
    if (!entry?.returnUrl) return undefined;
    return { flow: entry.pending?.flow, returnUrl: entry.returnUrl };
  }

  /**
   * The customer's answer on the simulated challenge page. A 3-D Secure challenge passes with the
   * sandbox code on a card that passes; a redirect passes when confirmed. Answered once.
   */
  async answerChallenge(idempotencyKey: string, answer: { code?: string; confirm: boolean }): Promise<string | undefined> {
    const entry = await this.entry(idempotencyKey);
    if (!entry?.returnUrl) return undefined;
    if (!entry.pending) return entry.returnUrl;
    const ref = (entry.outcome as AcquirerOutcome).acquirerRef;
    const passed = answer.confirm && entry.pending.then === 'approve' && (entry.pending.flow === 'redirect' || answer.code === SANDBOX_OTP);
    const outcome: AcquirerOutcome = passed
      ? await this.approved(ref, entry.card, Boolean(entry.storedCredentialRef === 'requested'))
      : { kind: 'declined', acquirerRef: ref, reason: entry.pending.flow === '3ds' ? SANDBOX_REASONS.threeDsFailed : SANDBOX_REASONS.redirectFailed };
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: ledgerKey(idempotencyKey),
          UpdateExpression: 'SET outcome = :o REMOVE pending',
          ConditionExpression: 'attribute_exists(pending)',
          ExpressionAttributeValues: { ':o': outcome },
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
    return entry.returnUrl;
  }

  private async followUp(kind: FollowUpKind, request: FollowUpRequest): Promise<FollowUpOutcome> {
    const existing = await this.entry(request.idempotencyKey);
    if (existing) return existing.outcome as FollowUpOutcome;
    const auth = await this.entry(request.authorization.idempotencyKey);
    const acquirerRef = `sbx_${randomUUID().replace(/-/g, '')}`;
    const plan = auth && (auth.outcome as AcquirerOutcome).acquirerRef === request.authorization.acquirerRef
      ? planFollowUp(kind, auth.card)
      : { kind: 'decline' as const, reason: 'Unknown authorization.' };
    const outcome: FollowUpOutcome = plan.kind === 'approve' ? { kind: 'approved', acquirerRef } : { kind: 'declined', acquirerRef, reason: plan.reason };
    const entry: LedgerEntry = { idempotencyKey: request.idempotencyKey, acquirerRef, card: auth?.card ?? { mask: '', expMonth: 0, expYear: 0 }, amountMinor: request.amountMinor, currency: request.currency, outcome };
    return (await this.putOnce(entry)).outcome as FollowUpOutcome;
  }

  private async approved(acquirerRef: string, card: CardFacts, storeCredential: boolean): Promise<AcquirerOutcome> {
    if (!storeCredential) return { kind: 'approved', acquirerRef };
    const storedCredentialRef = `sbxcred_${randomUUID().replace(/-/g, '')}`;
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: { ...credentialKey(storedCredentialRef), kind: 'sandbox-credential', card } }));
    return { kind: 'approved', acquirerRef, storedCredentialRef };
  }

  private async cardOf(request: AuthorizeRequest): Promise<CardFacts | undefined> {
    if (request.instrument.kind === 'card') {
      const c = request.instrument.card;
      return { mask: `${c.pan.slice(0, 6)}****${c.pan.slice(-4)}`, expMonth: c.expMonth, expYear: c.expYear };
    }
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: credentialKey(request.instrument.storedCredentialRef) }));
    return out.Item?.card as CardFacts | undefined;
  }

  private async record(
    request: AuthorizeRequest,
    card: CardFacts,
    outcome: AcquirerOutcome,
    pending?: LedgerEntry['pending'],
    undelivered?: AcquirerOutcome,
  ): Promise<AcquirerOutcome> {
    const entry: LedgerEntry = {
      idempotencyKey: request.idempotencyKey,
      acquirerRef: outcome.acquirerRef,
      card,
      amountMinor: request.amountMinor,
      currency: request.currency,
      returnUrl: request.returnUrl,
      outcome,
      ...(pending ? { pending } : {}),
      ...(undelivered ? { undelivered } : {}),
      ...(pending && request.storeCredential ? { storedCredentialRef: 'requested' } : {}),
    };
    return (await this.putOnce(entry)).outcome as AcquirerOutcome;
  }

  /** The first writer of an idempotency key wins; everyone else gets the winner's answer. */
  private async putOnce(entry: LedgerEntry): Promise<LedgerEntry> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...ledgerKey(entry.idempotencyKey), kind: 'sandbox-attempt', ...entry },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return entry;
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      const winner = await this.entry(entry.idempotencyKey);
      if (!winner) throw e;
      return winner;
    }
  }

  private async entry(idempotencyKey: string): Promise<LedgerEntry | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: ledgerKey(idempotencyKey), ConsistentRead: true }));
    return out.Item as LedgerEntry | undefined;
  }
}
