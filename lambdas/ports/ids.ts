import { randomBytes, randomUUID } from 'node:crypto';

/** Identifiers and secrets are injected so tests can make them predictable. */
export interface Ids {
  /** A public payment id (UUID). */
  paymentId(): string;
  /** A transaction id (UUID). */
  transId(): string;
  /** The secret half of a checkout link: 144 random bits. */
  linkSecret(): Buffer;
  /** A 64-character opaque token (card and recurring tokens). */
  longToken(): string;
}

export const randomIds: Ids = {
  paymentId: () => randomUUID(),
  transId: () => randomUUID(),
  linkSecret: () => randomBytes(18),
  longToken: () => randomBytes(32).toString('hex'),
};
