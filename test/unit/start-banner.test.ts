import { localRoutes } from '../../lib/routes';
import { bannerLines } from '../../local/banner';

/** What `npm start` prints, in order (issue: a newcomer's first minute with the runner). */
const banner = (over: Partial<Parameters<typeof bannerLines>[0]> = {}) =>
  bannerLines({
    base: 'http://127.0.0.1:3000',
    dataDir: '/home/me/shop/.data',
    customDataDir: false,
    routes: localRoutes('sandbox'),
    acquirer: 'Acquirer: the sandbox (test cards in docs/sandbox.md; no money moves)',
    demo: { merchant_key: 'mk-1', password: 'pw-1', webhookSecret: 'whsec_1', generated: true },
    operator: { username: 'admin', password: 'op-pw', role: 'admin', generated: true },
    curl: "curl -s http://127.0.0.1:3000/api/v1/session -H 'content-type: application/json' -d '{}'",
    showRoutes: false,
    ...over,
  });

describe('the npm start banner', () => {
  it('prints where it listens, the demo merchant, the operator, a curl, then the receiver and CLI commands', () => {
    const lines = banner();
    const at = (prefix: string) => lines.findIndex((l) => l.startsWith(prefix));
    const order = ['Checkout is running at http://127.0.0.1:3000', 'Demo merchant: ', 'Admin portal: ', 'curl -s ', 'Callbacks: ', 'Merchants: ', 'Next: ', 'Data: ', 'Stop: '].map(at);
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(lines[at('Demo merchant: ')]).toContain('"merchant_key":"mk-1","password":"pw-1"');
    expect(lines[at('Admin portal: ')]).toContain('{"username":"admin","password":"op-pw","role":"admin"}');
  });

  it('says where paying leads (the result page) and how to sign an edited curl', () => {
    const lines = banner();
    const curl = lines.findIndex((l) => l.startsWith('curl -s '));
    expect(lines[curl + 1]).toContain('returns to http://127.0.0.1:3000/local/result');
    expect(lines[curl + 1]).toContain('npm run -s merchant -- status|refund|void PAYMENT_ID');
    expect(lines[curl + 2]).toContain('"hash: Hash is not valid."');
    expect(lines[curl + 2]).toContain('npm run -s merchant -- sign session NUMBER AMOUNT CURRENCY DESCRIPTION');
  });

  it('lists the routes only with --routes, and says how to get them', () => {
    expect(banner().some((l) => l.startsWith('Routes: '))).toBe(false);
    expect(banner().find((l) => l.startsWith('Merchants: '))).toContain('the route list: npm start -- --routes');
    const withRoutes = banner({ showRoutes: true });
    expect(withRoutes.find((l) => l.startsWith('Routes: '))).toContain('POST /api/v1/session');
  });

  it('puts DATA_DIR in front of the receiver and CLI commands when the data directory is not the default', () => {
    const plain = banner().join('\n');
    expect(plain).not.toContain('DATA_DIR=');
    const custom = banner({ customDataDir: true, dataDir: '/tmp/shop-data' });
    const commands = custom.filter((l) => l.includes('npm run -s'));
    expect(commands.length).toBe(4);
    for (const line of commands) {
      const runs = line.match(/(?:DATA_DIR=\S+ )?npm run -s \w+/g) ?? [];
      expect(runs.length).toBeGreaterThan(0);
      expect(runs.every((r) => r.startsWith('DATA_DIR=/tmp/shop-data npm run -s'))).toBe(true);
    }
  });
});
