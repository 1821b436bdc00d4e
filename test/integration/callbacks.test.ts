import { ManualClock } from '../../lambdas/ports/clock';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { startCallbackReceiver, verifiesWith, type CallbackReceiver } from '../support/callback-receiver';
import { paidPayment, voidOf } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

let service: TestService;
let receiver: CallbackReceiver;
let shop: MerchantCredentials;
const clock = new ManualClock('2030-03-01T07:00:00Z');

beforeAll(async () => {
  receiver = await startCallbackReceiver();
  service = await startTestService({ clock });
  shop = await service.createMerchant({ name: 'Callback Shop', settings: { notificationUrl: receiver.url } });
});
afterAll(async () => {
  await service.close();
  await receiver.close();
});

const deliver = () => runCallbackJob(service.deps);

it('a paid payment produces one signed sale callback, a void one void callback', async () => {
  const paid = await paidPayment(service, shop);
  expect(receiver.received).toHaveLength(0);
  await deliver();
  const [sale] = await receiver.waitFor(1);
  expect(sale!.fields).toMatchObject({ id: paid.paymentId, type: 'sale', status: 'success', order_status: 'settled' });
  expect(verifiesWith(sale!, shop.password)).toBe(true);
  await voidOf(service, shop, paid.paymentId);
  await deliver();
  const [, voided] = await receiver.waitFor(2);
  expect(voided!.fields).toMatchObject({ id: paid.paymentId, type: 'void', status: 'success', order_status: 'void' });
  expect(verifiesWith(voided!, shop.password)).toBe(true);
  await deliver();
  expect(receiver.received).toHaveLength(2);
});
