import { ApiError } from '../../domain/errors';
import { refusalOf } from '../../domain/state-machine';
import { refund, refundAlreadyMade, type RefundDeps } from '../../use-cases/refund-payment';
import { operationAmount, ownPayment, type AcceptedResponse, type AmountOperationRequest, type OperationOptions } from './operations';

export type { AcceptedResponse, OperationOptions };

/**
 * POST /api/v1/payment/refund as the merchant sends it. The errors in the protocol's order: the
 * payment (208001), a replay's first answer, the refund rule (a payment not settled), then the
 * amount in the payment's currency (400), then what the refund itself refuses.
 */
export async function refundPayment(deps: RefundDeps, merchantKey: string, r: Pick<AmountOperationRequest, 'payment_id' | 'amount'>, options: OperationOptions = {}): Promise<AcceptedResponse> {
  const payment = await ownPayment(deps.store, merchantKey, r.payment_id);
  const accepted: AcceptedResponse = { payment_id: payment.paymentId, result: 'accepted' };
  if (options.transId && refundAlreadyMade(payment, options.transId)) return accepted;
  const refusal = refusalOf('refund', payment);
  if (refusal) throw new ApiError(refusal);
  const amountMinor = operationAmount(r.amount, payment);
  await refund(deps, {
    payment,
    amountMinor,
    actor: options.actor ?? `merchant:${merchantKey}`,
    ...(options.transId ? { transId: options.transId } : {}),
    ...(options.answerBy ? { answerBy: options.answerBy } : {}),
  });
  return accepted;
}
