import { createCallbackTransport, REFUSED_DESTINATION, type Resolver } from '../../lambdas/adapters/http/callback-transport';
import { destinationPolicy } from '../../lambdas/config';
import { setDeps } from '../../lambdas/container';
import { addressKind, notificationUrlProblem } from '../../lambdas/domain/notification-url';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { createMerchant, MerchantAdminError, updateMerchantSettings } from '../../lambdas/use-cases/manage-merchants';
import { startCallbackReceiver, type CallbackReceiver } from '../support/callback-receiver';
import { openSession, submitPage } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * SSRF through notification URLs: the metadata service, loopback services, private ranges and
 * internal names are refused when set and again at delivery (after DNS, on the very address the
 * connection uses), and a refusal says nothing about the target (no status, no latency).
 */
const INTERNAL = [
  'http://169.254.169.254/latest/meta-data/',
  'http://127.0.0.1:9001/',
  'http://0x7f000001/',
  'http://127.1/',
  'http://2130706433/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:a9fe:a9fe]/',
  'http://10.0.0.5/',
  'http://172.16.3.4/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://[fd00::1]/',
  'http://[fe80::1]/',
  'http://0.0.0.0/',
  'http://localhost:8080/',
  'http://metadata.google.internal/',
  'http://printer.local/',
  'http://intranet/',
];

let service: TestService;
let strict: TestService;
const receivers: CallbackReceiver[] = [];
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await service.close();
});

describe('at setting time', () => {
  beforeAll(async () => {
    strict = await startTestService({ env: { ALLOW_LOOPBACK_CALLBACKS: '0' } });
  });
  afterAll(async () => {
    await strict.close();
    // One process, one set of handler dependencies: back to the main service's.
    setDeps(service.deps);
  });

  it.each(INTERNAL)('%s is refused', async (url) => {
    await expect(createMerchant(strict.deps, { name: 'Probe', settings: { notificationUrl: url } })).rejects.toThrow(MerchantAdminError);
    const shop = await strict.createMerchant({ name: 'Probe' });
    await expect(updateMerchantSettings(strict.deps, shop.merchant_key, { notificationUrl: url })).rejects.toThrow(/notification URL is refused/);
  });

  it('a public https URL is accepted', async () => {
    const shop = await strict.createMerchant({ name: 'Fine', settings: { notificationUrl: 'https://shop.example/callbacks' } });
    expect(shop.merchant_key).toBeDefined();
  });

  it('on AWS stages only https, and never loopback whatever the switch says', () => {
    const aws = destinationPolicy({ DYNAMODB_ENDPOINT: undefined, ALLOW_LOOPBACK_CALLBACKS: '1' });
    expect(aws).toEqual({ allowLoopback: false, httpsOnly: true });
    expect(notificationUrlProblem('http://shop.example/cb', aws)).toBe('it must be an https URL');
    expect(notificationUrlProblem('https://127.0.0.1/cb', aws)).toMatch(/private, loopback or reserved/);
    expect(notificationUrlProblem('https://shop.example/cb', aws)).toBeUndefined();
  });

  it('classifies addresses in every spelling', () => {
    expect(['8.8.8.8', '2606:4700::1111', '1.1.1.1'].map(addressKind)).toEqual(['public', 'public', 'public']);
    expect(['127.0.0.1', '::1', '::ffff:127.0.0.2'].map(addressKind)).toEqual(['loopback', 'loopback', 'loopback']);
    expect(['169.254.169.254', '10.1.2.3', '::ffff:10.0.0.1', 'fd12::1', '::', '224.0.0.1', '198.18.0.1'].map(addressKind)).toEqual(Array(7).fill('not-public'));
  });
});

describe('at delivery time', () => {
  it('a stored internal URL (set before the rule, or by a direct write) is not posted to; the log shows no status or latency', async () => {
    const receiver = await startCallbackReceiver();
    receivers.push(receiver);
    const shop = await service.createMerchant({ name: 'Old Setting' });
    // Written around the validation, as a setting from before this rule would be.
    const merchant = (await service.deps.merchants.find(shop.merchant_key))!;
    await service.deps.merchants.save({ ...merchant, notificationUrl: 'http://169.254.169.254/latest/meta-data/' });
    const s = await openSession(service, shop);
    await submitPage(service, s, { card: '01/38' });
    await runCallbackJob(service.deps);
    const [record] = await service.deps.callbacks.records(s.paymentId);
    expect(record!.attempts).toEqual([{ at: expect.any(String), url: 'http://169.254.169.254/latest/meta-data/', latencyMs: 0, error: REFUSED_DESTINATION }]);
  });

  const fakeDns = (answers: Record<string, string>): Resolver => (hostname, _options, callback) =>
    answers[hostname] ? callback(null, [{ address: answers[hostname]!, family: 4 }]) : callback(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), []);

  it('a public name that resolves to a private address (DNS rebinding) is refused after resolution', async () => {
    const receiver = await startCallbackReceiver();
    receivers.push(receiver);
    const port = new URL(receiver.url).port;
    const transport = createCallbackTransport({ allowLoopback: false, httpsOnly: false }, fakeDns({ 'rebind.example': '127.0.0.1' }));
    const result = await transport.post(`http://rebind.example:${port}/callbacks`, 'a=1', 2000);
    expect(result).toEqual({ kind: 'failed', error: REFUSED_DESTINATION, latencyMs: 0 });
    expect(receiver.received).toHaveLength(0);
  });

  it('connects to the address it checked, with the URL\'s own host name', async () => {
    const receiver = await startCallbackReceiver();
    receivers.push(receiver);
    const port = new URL(receiver.url).port;
    const transport = createCallbackTransport({ allowLoopback: true, httpsOnly: false }, fakeDns({ 'shop.example': '127.0.0.1' }));
    const result = await transport.post(`http://shop.example:${port}/callbacks`, 'a=1', 2000, { 'X-Checkout-Signature': 't=1,v1=x' });
    expect(result).toMatchObject({ kind: 'answered', httpStatus: 200 });
    expect(receiver.received.map((c) => [c.raw, c.signature])).toEqual([['a=1', 't=1,v1=x']]);
  });
});
