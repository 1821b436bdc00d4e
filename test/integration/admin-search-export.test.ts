import fc from 'fast-check';
import { ManualClock } from '../../lambdas/ports/clock';
import { BULK_LIMITS } from '../../lambdas/use-cases/admin/search';
import { EXPORT_COLUMNS, csvLine } from '../../lambdas/protocol/admin/payments-csv';
import { updateMerchantSettings, type MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { adminApi, seedOperator, signIn, type AdminApi, type AdminPayment } from '../support/admin';
import { invalidRequest, openSession, paidPayment } from '../support/payments';
import { startTestService, type TestService } from '../support/service';
import { soakCount } from '../support/soak';

/**
 * A search's total count (GET /admin/api/payments/count) and its CSV export
 * (GET /admin/api/payments/export), over real HTTP against the local engine. Both read through the
 * same index as the list, a bounded amount per request, resuming with a cursor: whatever the
 * criteria, the count, the rows of the export and the payments of the list's pages agree.
 */
const DAYS = ['2030-09-01', '2030-09-02', '2030-09-03', '2030-09-04'];
const clock = new ManualClock(new Date(`${DAYS[0]}T08:00:00.000Z`));
let service: TestService;
let api: AdminApi;
const shops: MerchantCredentials[] = [];

/** RFC 4180: quoted cells, doubled quotes, CRLF line ends. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(cell), (cell = '');
    else if (c === '\r' && text[i + 1] === '\n') row.push(cell), rows.push(row), (row = []), (cell = ''), i++;
    else cell += c;
  }
  if (cell || row.length) throw new Error('the file does not end with CRLF');
  return rows;
}

beforeAll(async () => {
  service = await startTestService({ clock });
  api = adminApi(service, await signIn(service, await seedOperator(service, 'erin', 'erin-long-password', 'viewer')));
  for (const name of ['Alpha Books', 'Beta Games', '=HYPERLINK("http://evil.example","Gamma")']) shops.push(await service.createMerchant({ name }));
  await updateMerchantSettings(service.deps, shops[1]!.merchant_key, { dms: true });
  // Payments over four days, three merchants, every status the page can leave, odd order numbers.
  const orders = ['INV-1', '@SUM(1+1)', '-2+3', '"quoted",comma', 'INV-2', '+44', 'INV-3'];
  let n = 0;
  for (const day of DAYS) {
    for (const [s, shop] of shops.entries()) {
      for (let k = 0; k < 3; k++) {
        clock.set(new Date(Date.parse(`${day}T09:00:00.000Z`) + (n++ % 50) * 60_000));
        const order = { number: `${orders[n % orders.length]}-${n}`, amount: `${10 + (n % 4)}.50` };
        const extra = { customer: { email: `buyer${n % 3}@example.${s === 0 ? 'com' : 'org'}` } };
        if (k === 0) await openSession(service, shop, { order, extra });
        else await paidPayment(service, shop, { order, extra, ...(k === 2 && n % 2 ? { card: '02/38' } : {}) });
      }
    }
  }
  clock.set(`${DAYS[3]}T20:00:00.000Z`);
}, 120_000);
afterAll(() => service.close());

async function listed(params: Record<string, string>): Promise<AdminPayment[]> {
  const found: AdminPayment[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const res = await api.searchPayments({ ...params, ...(cursor ? { cursor } : {}) });
    expect(res.status).toBe(200);
    found.push(...res.json.payments);
    cursor = res.json.cursor;
    if (!cursor) return found;
  }
  throw new Error('the list never ended');
}

async function counted(params: Record<string, string>): Promise<{ total: number; requests: number }> {
  let cursor: string | undefined;
  for (let requests = 1; requests <= 100; requests++) {
    const res = await api.countPayments({ ...params, ...(cursor ? { cursor } : {}) });
    expect(res.status).toBe(200);
    if (res.json.complete) {
      expect(res.json.cursor).toBeUndefined();
      return { total: res.json.total, requests };
    }
    cursor = res.json.cursor;
    expect(cursor).toEqual(expect.any(String));
  }
  throw new Error('the count never ended');
}

async function exported(params: Record<string, string>): Promise<{ text: string; parts: number }> {
  let cursor: string | undefined;
  let text = '';
  for (let parts = 1; parts <= 100; parts++) {
    const res = await api.exportPayments({ ...params, ...(cursor ? { cursor } : {}) });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-disposition']).toBe('attachment; filename="payments.csv"');
    text += res.text;
    expect(Number(res.headers['x-export-rows'])).toBe(parseCsv(res.text.replace(/^\uFEFF/, '')).length - (parts === 1 ? 1 : 0));
    cursor = res.headers['x-next-cursor'] as string | undefined;
    if (!cursor) return { text, parts };
  }
  throw new Error('the export never ended');
}

const WHOLE_RANGE = { from: DAYS[0]!, to: DAYS[3]! };

describe('the total count of a search', () => {
  it('counts every payment of the range from the index alone, resuming over several requests when it is long', async () => {
    const all = await listed(WHOLE_RANGE);
    expect(all).toHaveLength(36);
    expect((await counted(WHOLE_RANGE)).total).toBe(36);
    // 31 days of every merchant the service has: more merchant-days than one request counts.
    const month = { from: '2030-08-05', to: DAYS[3]! };
    const merchants = (await api.merchants()).json.merchants.length;
    expect(merchants * 31).toBeGreaterThan(BULK_LIMITS.countDaysPerRequest);
    const long = await counted(month);
    expect(long).toEqual({ total: 36, requests: Math.ceil((merchants * 31) / BULK_LIMITS.countDaysPerRequest) });
  });

  it('counts by merchant from the index; status, e-mail, amount and order parts by reading the payments', async () => {
    for (const params of [
      { status: 'settled' },
      { status: 'decline', merchant: 'beta' },
      { merchant: shops[0]!.merchant_key },
      { email: 'example.org' },
      { amount: '11.50', status: 'settled' },
      { order: 'sum(' },
      { last4: '1111' },
    ] as Record<string, string>[]) {
      const expected = (await listed({ ...WHOLE_RANGE, ...params })).length;
      expect([params, (await counted({ ...WHOLE_RANGE, ...params })).total]).toEqual([params, expected]);
    }
  });

  it('a whole payment id or an exact order number counts what the list shows', async () => {
    const [first] = await listed(WHOLE_RANGE);
    expect((await counted({ ...WHOLE_RANGE, payment_id: first!.payment_id })).total).toBe(1);
    expect((await counted({ ...WHOLE_RANGE, order: first!.order_number })).total).toBe(1);
    expect((await counted({ ...WHOLE_RANGE, payment_id: '00000000-0000-4000-8000-000000000000' })).total).toBe(0);
  });

  it('refuses what the list refuses, and a cursor it did not make, with 400', async () => {
    const bad = await api.countPayments({ last4: '12' });
    expect([bad.status, bad.json]).toEqual([400, invalidRequest('last4: Enter the last four digits of the card.')]);
    // A list cursor carries no count so far: not a count cursor.
    const listCursor = (await api.searchPayments({ ...WHOLE_RANGE })).json.cursor!;
    for (const cursor of [listCursor, 'garbage', Buffer.from(JSON.stringify({ day: 0, merchant: 0, counted: -1 })).toString('base64url')]) {
      const res = await api.countPayments({ ...WHOLE_RANGE, cursor });
      expect([res.status, res.json]).toEqual([400, invalidRequest('cursor: This value is not valid.')]);
    }
  });
});

describe('the CSV export of a search', () => {
  it('is one RFC 4180 file with a header, a row per payment in the order of the list, decimals as shown, cards masked', async () => {
    const all = await listed(WHOLE_RANGE);
    const { text } = await exported(WHOLE_RANGE);
    expect(text.startsWith('\uFEFF')).toBe(true);
    const [header, ...rows] = parseCsv(text.slice(1));
    expect(header).toEqual([...EXPORT_COLUMNS]);
    expect(rows.map((r) => r[1])).toEqual(all.map((p) => p.payment_id));
    const column = (name: (typeof EXPORT_COLUMNS)[number]) => EXPORT_COLUMNS.indexOf(name);
    for (const [i, row] of rows.entries()) {
      const p = all[i]!;
      expect(row).toHaveLength(EXPORT_COLUMNS.length);
      expect([row[column('amount')], row[column('currency')], row[column('status')], row[column('created_at')]]).toEqual([p.amount, p.currency, p.status, p.created_at]);
      // What the order was and who paid, as the list shows them (a leading apostrophe only where a spreadsheet would run a formula).
      expect(row[column('description')]!.replace(/^'(?=[=+\-@])/, '')).toBe(p.description);
      expect(row[column('customer_name')]!.replace(/^'(?=[=+\-@])/, '')).toBe(p.customer?.name ?? '');
      expect(row[column('amount')]).toMatch(/^\d+\.\d{2}$/);
    }
    expect(rows.filter((r) => r[column('card_mask')]).every((r) => /^\d{6}\*+\d{4}$/.test(r[column('card_mask')]!))).toBe(true);
    expect(text).not.toContain('4111111111111111');
  });

  it('never lets a spreadsheet run a cell as a formula: order numbers and names from outside start with an apostrophe', async () => {
    const rows = parseCsv((await exported(WHOLE_RANGE)).text.slice(1)).slice(1);
    const cells = rows.flat();
    expect(cells.filter((c) => /^[=+\-@]/.test(c))).toEqual([]);
    expect(cells).toContain(`'=HYPERLINK("http://evil.example","Gamma")`);
    expect(cells.some((c) => /^'@SUM\(1\+1\)-\d+$/.test(c))).toBe(true);
    expect(cells.some((c) => /^'-2\+3-\d+$/.test(c))).toBe(true);
    expect(cells.some((c) => /^"quoted",comma-\d+$/.test(c))).toBe(true);
    expect(csvLine(['=1+1', '+1', '-1', '@x', '\tx', '\rx', 'a"b', 'plain'])).toBe(`'=1+1,'+1,'-1,'@x,'\tx,"'\rx","a""b",plain\r\n`);
  });

  it('comes in parts read page by page: a month of every merchant is several parts, joined the whole search', async () => {
    const month = { from: '2030-08-05', to: DAYS[3]! };
    const { text, parts } = await exported({ ...month, email: 'example' });
    expect(parts).toBeGreaterThan(1);
    const rows = parseCsv(text.slice(1)).slice(1);
    expect(rows.map((r) => r[1])).toEqual((await listed({ ...month, email: 'example' })).map((p) => p.payment_id));
    expect(rows.length).toBeLessThanOrEqual(BULK_LIMITS.exportRows * parts);
  });
});

describe('list, count and export agree', () => {
  it('for any combination of criteria (fast-check)', async () => {
    const criteria = fc.record(
      {
        status: fc.constantFrom('settled', 'decline', 'prepare', 'pending'),
        merchant: fc.constantFrom('alpha', 'beta', 'gamma', 'books', 'nobody'),
        email: fc.constantFrom('buyer1', 'example.com', 'BUYER2@EXAMPLE.ORG'),
        amount: fc.constantFrom('10.5', '11.50', '12', '13.50'),
        order: fc.constantFrom('inv', '-2', '"', 'sum('),
        from: fc.constantFrom(...DAYS),
        to: fc.constantFrom(...DAYS),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(criteria, async (c) => {
        const params = Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)) as Record<string, string>;
        if (params.from && params.to && params.from > params.to) [params.from, params.to] = [params.to, params.from];
        const range = { ...WHOLE_RANGE, ...params };
        const ids = (await listed(range)).map((p) => p.payment_id);
        expect(new Set(ids).size).toBe(ids.length);
        expect((await counted(range)).total).toBe(ids.length);
        const rows = parseCsv((await exported(range)).text.slice(1)).slice(1);
        expect(rows.map((r) => r[1])).toEqual(ids);
      }),
      // Each run lists, counts and exports over the whole service (about 1,200 index reads): 5 by default, 60 under SOAK=1.
      { numRuns: soakCount({ fast: 5, soak: 60 }) },
    );
  }, 240_000);
});
