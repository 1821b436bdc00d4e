import { ApiError } from '../../domain/errors';
import { protocolDate } from '../../domain/payment';
import { CAPTURE_IN_PROGRESS_REASON, capture, type CaptureDeps, type CaptureResult } from '../../use-cases/capture-payment';
import { operationAmount, ownPayment, type AmountOperationRequest, type OperationOptions } from './operations';

/** The answer to POST /api/v1/payment/capture (platform extension). */
export interface CaptureResponse {
  payment_id: string;
  status: string;
  trans_status: 'SUCCESS' | 'FAIL';
  date: string;
  reason?: string;
}

export { CAPTURE_IN_PROGRESS_REASON };

/**
 * The API's answer to a capture. A capture another request claimed first is refused (208003), as
 * racing voids and retries are: this request captured nothing, and answering FAIL while the other
 * capture succeeds would tell the merchant the opposite of what happened.
 */
export function captureResponse(result: CaptureResult, now: Date): CaptureResponse {
  if (result.kind === 'taken') {
    const other = result.payment.operation;
    throw new ApiError(result.payment.status === 'pending' && other && other.kind !== 'capture' ? 'OPERATION_IN_PROGRESS' : 'CAPTURE_NOT_PENDING');
  }
  const p = result.payment;
  const captured = result.kind === 'captured';
  return {
    payment_id: p.paymentId,
    status: captured ? 'settled' : 'pending',
    trans_status: captured ? 'SUCCESS' : 'FAIL',
    date: protocolDate(now.toISOString()),
    ...(result.kind === 'declined' ? { reason: result.reason } : result.kind === 'in-progress' ? { reason: CAPTURE_IN_PROGRESS_REASON } : {}),
  };
}

/** POST /api/v1/payment/capture as the merchant sends it: the merchant's own payment (208001), the amount in its currency (400), then the capture. */
export async function captureOwnPayment(deps: CaptureDeps, merchantKey: string, r: Pick<AmountOperationRequest, 'payment_id' | 'amount'>, options: OperationOptions = {}): Promise<CaptureResponse> {
  const payment = await ownPayment(deps.store, merchantKey, r.payment_id);
  const result = await capture(deps, {
    payment,
    amountMinor: operationAmount(r.amount, payment),
    actor: options.actor ?? `merchant:${merchantKey}`,
    ...(options.transId ? { transId: options.transId } : {}),
    ...(options.answerBy ? { answerBy: options.answerBy } : {}),
  });
  return captureResponse(result, deps.clock.now());
}
