import { protocolDate, type Payment } from '../../domain/payment';
import { VOID_IN_PROGRESS_REASON, voidPayment, type VoidDeps, type VoidResult } from '../../use-cases/void-payment';
import { ownPayment, type OperationOptions, type PaymentIdRequest } from './operations';

/** The answer to POST /api/v1/payment/void (protocol.md). */
export interface VoidResponse {
  status: 'SUCCESS' | 'FAIL';
  payment_status: 'void' | 'settled';
  payment_id: string;
  date: string;
  reason?: string;
  order: { number: string; amount: string; currency: string; description: string };
}

export { VOID_IN_PROGRESS_REASON };

const response = (p: Payment, status: VoidResponse['status'], at: Date, reason?: string): VoidResponse => ({
  status,
  payment_status: status === 'SUCCESS' ? 'void' : 'settled',
  payment_id: p.paymentId,
  date: protocolDate(at.toISOString()),
  ...(reason ? { reason } : {}),
  order: { number: p.order.number, amount: p.order.amount, currency: p.order.currency, description: p.order.description },
});

/** A void's result as the merchant reads it: SUCCESS, or FAIL with why (the acquirer, the window, in progress). */
export function voidResponse(result: VoidResult): VoidResponse {
  if (result.kind === 'voided') return response(result.payment, 'SUCCESS', result.at);
  return response(result.payment, 'FAIL', result.at, result.kind === 'failed' ? result.reason : VOID_IN_PROGRESS_REASON);
}

/** POST /api/v1/payment/void as the merchant sends it: the merchant's own payment (208001), then the void. */
export async function voidOwnPayment(deps: VoidDeps, merchantKey: string, r: Pick<PaymentIdRequest, 'payment_id'>, options: OperationOptions = {}): Promise<VoidResponse> {
  const payment = await ownPayment(deps.store, merchantKey, r.payment_id);
  const result = await voidPayment(deps, {
    payment,
    actor: options.actor ?? `merchant:${merchantKey}`,
    ...(options.transId ? { transId: options.transId } : {}),
    ...(options.answerBy ? { answerBy: options.answerBy } : {}),
  });
  return voidResponse(result);
}
