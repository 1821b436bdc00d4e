import { retryPayment } from '../../use-cases/retry-payment';
import type { RecurringDeps } from '../../use-cases/recurring-payment';
import { ownPayment, type AcceptedResponse, type OperationOptions, type PaymentIdRequest } from './operations';

/** POST /api/v1/payment/retry (platform extension) as the merchant sends it: the merchant's own payment (208001), then the retry. */
export async function retryOwnPayment(deps: RecurringDeps, merchantKey: string, r: Pick<PaymentIdRequest, 'payment_id'>, options: Pick<OperationOptions, 'transId'> = {}): Promise<AcceptedResponse> {
  const payment = await ownPayment(deps.store, merchantKey, r.payment_id);
  await retryPayment(deps, { payment, ...(options.transId ? { transId: options.transId } : {}) });
  return { payment_id: payment.paymentId, result: 'accepted' };
}
