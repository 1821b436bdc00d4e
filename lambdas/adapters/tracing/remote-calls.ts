import { inSubsegment } from '../../observability/telemetry';
import type { Acquirer, AcquirerOutcome, FollowUpOutcome, FollowUpRequest, OperationRef } from '../../ports/acquirer';
import type { CallbackTransport } from '../../ports/callbacks';

/**
 * The acquirer with each call in its own X-Ray subsegment (`acquirer authorize`, …), annotated
 * with the payment only: an authorization carries the card, which never goes into a trace.
 */
export function tracedAcquirer(acquirer: Acquirer): Acquirer {
  const call = <T>(operation: string, paymentId: string, run: () => Promise<T>) => inSubsegment(`acquirer ${operation}`, { payment_id: paymentId }, run);
  return {
    authorize: (request) => call<AcquirerOutcome>('authorize', request.paymentId, () => acquirer.authorize(request)),
    completeAction: (ref: OperationRef) => call('completeAction', ref.paymentId, () => acquirer.completeAction(ref)),
    lookup: (ref: OperationRef) => call('lookup', ref.paymentId, () => acquirer.lookup(ref)),
    close: (ref: OperationRef) => call('close', ref.paymentId, () => acquirer.close(ref)),
    capture: (request: FollowUpRequest) => call<FollowUpOutcome>('capture', request.paymentId, () => acquirer.capture(request)),
    void: (request: FollowUpRequest) => call<FollowUpOutcome>('void', request.paymentId, () => acquirer.void(request)),
    refund: (request: FollowUpRequest) => call<FollowUpOutcome>('refund', request.paymentId, () => acquirer.refund(request)),
    reverse: (request: FollowUpRequest) => call<FollowUpOutcome>('reverse', request.paymentId, () => acquirer.reverse(request)),
    chargebacks: (ref: OperationRef) => call('chargebacks', ref.paymentId, () => acquirer.chargebacks(ref)),
    ...(acquirer.disputeNews ? { disputeNews: (now: Date, limit: number) => inSubsegment('acquirer disputeNews', {}, () => acquirer.disputeNews!(now, limit)) } : {}),
  };
}

/** Each callback POST in its own subsegment, named by the receiving host (not its path or query). */
export function tracedTransport(transport: CallbackTransport): CallbackTransport {
  return {
    post: (url, body, timeoutMs, headers) => {
      let host = 'invalid-url';
      try {
        host = new URL(url).host;
      } catch {
        // The transport refuses it and says why.
      }
      return inSubsegment(`callback POST ${host}`, { callback_host: host }, () => transport.post(url, body, timeoutMs, headers));
    },
  };
}
