import type { CardSummary } from '../domain/card';
import type { Customer } from '../domain/payment';

/** A saved card (req_token): usable by its merchant only, until the card expires. */
export interface CardToken {
  readonly token: string;
  readonly merchantKey: string;
  /** The acquirer's reference of the stored card; never shown to anyone. */
  readonly storedCredentialRef: string;
  readonly card: CardSummary;
  readonly createdAt: string;
}

/** A recurring chain started by a recurring_init payment. */
export interface RecurringChain {
  readonly token: string;
  readonly merchantKey: string;
  readonly initPaymentId: string;
  readonly initTransId: string;
  readonly storedCredentialRef: string;
  /** The currency of every charge of the chain: the first payment's. */
  readonly currency: string;
  readonly card: CardSummary;
  readonly scheduleId?: string;
  readonly customer: Customer;
  /** The IP of the customer who paid the first payment: every callback of the chain carries it. */
  readonly customerIp?: string;
  readonly createdAt: string;
  /** The acquirer account the first payment went through, which holds the card: every charge of the chain goes through it (the stage's when absent). */
  readonly acquirerAccount?: string;
}

export interface TokenVault {
  saveCardToken(token: CardToken): Promise<void>;
  findCardToken(token: string): Promise<CardToken | undefined>;
  findCardTokens(tokens: readonly string[]): Promise<CardToken[]>;
  saveRecurringChain(chain: RecurringChain): Promise<void>;
  findRecurringChain(token: string): Promise<RecurringChain | undefined>;
}
