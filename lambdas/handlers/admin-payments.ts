import { operatorEndpoint } from '../middleware/operator-endpoint';
import { cursorDeps } from '../wiring/cursor-key';
import { paymentList } from '../protocol/admin/payment-view';
import { paymentSearchOf } from '../protocol/admin/queries';
import { searchPayments } from '../use-cases/admin/search';

/** GET /admin/api/payments?payment_id=&order=&status=&merchant=&email=&last4=&amount=&from=&to=&cursor= */
export const handler = operatorEndpoint(async ({ event, deps }) => paymentList(await searchPayments(deps, paymentSearchOf(event.queryStringParameters))), { deps: cursorDeps });
