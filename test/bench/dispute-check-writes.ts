import { DISPUTE_CHECK_DAYS } from '../../lambdas/domain/payment/chargebacks';
import { ManualClock } from '../../lambdas/ports/clock';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { startCallbackReceiver } from '../support/callback-receiver';
import { openSession, statusOf, submitPage } from '../support/payments';
import { startFakeGateway } from '../support/s2s-card-gateway';
import { startTestService } from '../support/service';
import { WriteRecorder } from './write-heat';

/**
 * What the bench's key-heat run (sandbox acquirer) cannot see: on S2S CARD, prod's acquirer, every
 * settled payment is asked about chargebacks on a schedule (DISPUTE_CHECK_DAYS after its money
 * settled), because the gateway may lose the notification of one. The answer that settles the
 * payment moves the claim's work entry to the first check instead of removing it, and each check
 * is a write of its count and a move of the entry to the next check (the last one removes it).
 *
 * `npx tsx test/bench/dispute-check-writes.ts [checkouts]`: that many card payments through the
 * page against the fake gateway and their merchant callbacks delivered by the stream dispatcher (the
 * table's writes recorded as the key-heat run records them), then the clock moved past each
 * scheduled check and the reconciler run; prints the write units per payment of the checkout and of
 * its checks.
 */
const CHECKOUTS = Number(process.argv[2] ?? 20);
const DAY_MS = 24 * 60 * 60_000;

async function main(): Promise<void> {
  const clock = new ManualClock(new Date('2030-06-03T08:00:00Z'));
  const gateway = await startFakeGateway();
  const service = await startTestService({
    clock,
    env: { ACQUIRER: 's2s-card', S2S_CARD_URL: gateway.url, S2S_CARD_CLIENT_KEY: gateway.clientKey, S2S_CARD_PASSWORD: gateway.password, CALLBACK_STREAM: '1' },
  });
  gateway.notifyUrl = `${service.baseUrl}/acquirer/s2s-card/notify`;
  const recorder = new WriteRecorder(service.deps.db, { endpoint: service.backend.dynamodbEndpoint, region: 'local', tableName: service.backend.tableName });
  try {
    const receiver = await startCallbackReceiver();
    const shop = await service.createMerchant({ name: 'Dispute Check Shop', settings: { notificationUrl: receiver.url } });
    const units = () => recorder.writes.reduce((n, w) => n + w.uses.reduce((m, u) => m + u.units, 0), 0);
    const byTarget = () => {
      const t: Record<string, number> = {};
      for (const w of recorder.writes) for (const u of w.uses) t[u.target] = (t[u.target] ?? 0) + u.units;
      return Object.entries(t).map(([k, v]) => `${k} ${(v / CHECKOUTS).toFixed(2)}`).join(', ');
    };
    const ids: string[] = [];
    for (let n = 1; n <= CHECKOUTS; n++) {
      await recorder.during(n, async () => {
        const session = await openSession(service, shop, {
          order: { currency: 'EUR' },
          extra: { customer: { name: 'Jane Roe', email: 'jane.roe@example.com' }, billing_address: { country: 'DE', city: 'Berlin', address: 'Street 1', zip: '10115' } },
        });
        const page = await submitPage(service, session, {});
        if (page.status >= 500) throw new Error(`page failed: ${page.status}`);
        ids.push(session.paymentId);
      });
    }
    await new Promise((r) => setTimeout(r, 1500)); // the gateway's callbacks for the sales
    // The merchant's callbacks, as the stream dispatcher delivers them (the lease the answer left it).
    await recorder.during(0, () => runCallbackJob(service.deps, { paymentIds: ids, deferSlow: true, fromStream: true }));
    await receiver.close();
    const settled = (await Promise.all(ids.map((id) => statusOf(service, shop, id)))).filter((s) => (s as { status?: string }).status === 'settled').length;
    const checkout = units();
    const checkoutTargets = byTarget();
    recorder.reset();
    // The payments settled at this (manual) time: the clock set past each check in turn.
    const paidAt = clock.now().getTime();
    for (const days of DISPUTE_CHECK_DAYS) {
      clock.set(new Date(paidAt + days * DAY_MS + 60_000));
      await reconcileDue(service.deps);
    }
    const checks = units();
    const checkTargets = byTarget();
    const left = (await Promise.all(ids.map((id) => service.deps.store.findPayment(id)))).map((p) => p?.disputeChecks ?? 0);
    console.log(`S2S CARD, ${CHECKOUTS} card payments through the page (${settled} settled), CALLBACK_STREAM=1:`);
    console.log(`  the checkout's requests, the gateway's callbacks and the merchant's callback (stream dispatcher): ${(checkout / CHECKOUTS).toFixed(2)} WRU per payment (${checkoutTargets})`);
    console.log(`  its ${DISPUTE_CHECK_DAYS.length} scheduled dispute checks (days ${DISPUTE_CHECK_DAYS.join(', ')}): ${(checks / CHECKOUTS).toFixed(2)} WRU per payment (${checkTargets}); checks made per payment: ${[...new Set(left)].join('/')}`);
  } finally {
    recorder.close();
    await service.close();
    await gateway.close();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
