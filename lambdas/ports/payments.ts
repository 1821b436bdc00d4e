import type { Payment } from '../domain/payment';

export interface PaymentStore {
  /**
   * Writes a new payment (status prepare) with its checkout link. Until a first attempt is made the
   * item carries a TTL at the link's expiry, so abandoned checkouts clean themselves up.
   */
  createPayment(payment: Payment): Promise<void>;
  findPayment(paymentId: string): Promise<Payment | undefined>;
  /** The most recent payment of a merchant's order number. */
  findLatestPaymentByOrder(merchantKey: string, orderNumber: string): Promise<Payment | undefined>;
}
