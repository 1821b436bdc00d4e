import { build, type Metafile } from 'esbuild';
import { join } from 'node:path';
import { FALLBACK_ROUTE, ROUTES, secretsRead } from '../../lib/routes';
import { ORIGIN_SECRET_INJECT, PROJECT_ROOT } from '../../lib/bundling';
import { callsAcquirer } from '../../lib/table-access';
import { esbuildApiOptions } from '../bench/bundles';

/**
 * Each function builds only the dependencies it uses (lambdas/wiring/), so its bundle carries the
 * clients of its own capabilities: a route that reads no secret bundles no Secrets Manager client.
 * Proved on esbuild's metafile of every route's bundle, built with the stack's options.
 */
const SECRETS_MANAGER = /node_modules\/@aws-sdk\/client-secrets-manager\//;

const ENTRIES = [...new Map([...ROUTES, FALLBACK_ROUTE].map((r) => [r.entry, r])).values()];
const outName = (entry: string) => entry.replace(/^lambdas\/handlers\//, '').replace(/\.ts$/, '');

/** The inputs of each entry's bundle (by entry path), built with the stack's options and `inject`. */
async function bundleInputs(entries: readonly string[], inject: readonly string[] = []): Promise<Map<string, string[]>> {
  const { sourcemap: _s, ...options } = esbuildApiOptions();
  const result = await build({
    ...options,
    absWorkingDir: PROJECT_ROOT,
    entryPoints: entries.map((entry) => ({ in: join(PROJECT_ROOT, entry), out: outName(entry) })),
    inject: inject.map((module) => join(PROJECT_ROOT, module)),
    outdir: join(PROJECT_ROOT, '.route-bundles'),
    write: false,
    minify: false,
    metafile: true,
    logLevel: 'error',
  });
  const outputs: Metafile['outputs'] = result.metafile.outputs;
  return new Map(
    Object.values(outputs)
      .filter((o) => o.entryPoint)
      .map((o) => [o.entryPoint as string, Object.keys(o.inputs)]),
  );
}

let inputsByEntry: Map<string, string[]>;
beforeAll(async () => {
  inputsByEntry = await bundleInputs(ENTRIES.map((r) => r.entry));
}, 120_000);

const bundledInputs = (entry: string): string[] => {
  const inputs = inputsByEntry.get(entry);
  if (!inputs) throw new Error(`no bundle of ${entry}`);
  return inputs;
};

const quiet = ROUTES.filter((r) => secretsRead(r).length === 0);
const reading = ROUTES.filter((r) => secretsRead(r).length > 0);

test('the table has routes of both kinds (the check below is not vacuous)', () => {
  expect(quiet.map((r) => r.id)).toEqual(expect.arrayContaining(['CheckoutStatus', 'AdminSession', 'AdminMerchants', 'AdminMerchantUpdate', 'AdminPaymentCallbacks']));
  expect(reading.map((r) => r.id)).toEqual(expect.arrayContaining(['CreateSession', 'CheckoutPage', 'AdminPayments', 'AdminMerchantCreate', 'AdminPaymentAction']));
});

test.each([...quiet, FALLBACK_ROUTE].map((r) => [r.id, r.entry] as const))('%s reads no secret and bundles no Secrets Manager client', (_id, entry) => {
  expect(bundledInputs(entry).filter((input) => SECRETS_MANAGER.test(input))).toEqual([]);
});

test.each(reading.map((r) => [r.id, secretsRead(r).join(', '), r.entry] as const))('%s reads %s: its bundle has the client', (_id, _secrets, entry) => {
  expect(bundledInputs(entry).some((input) => SECRETS_MANAGER.test(input))).toBe(true);
});

test('a route that calls no acquirer bundles neither connector', () => {
  const acquirerCode = /lambdas\/adapters\/(s2s-card|sandbox-acquirer)\//;
  // The checkout page opens a link through the checkout use case, whose dependencies (use-cases/checkout.ts CheckoutDeps) include the acquirer for paying.
  const without = ROUTES.filter((r) => !callsAcquirer(r.access.table) && !r.access.acquirerCredentials && r.id !== 'CheckoutPage');
  expect(without.map((r) => r.id)).toEqual(expect.arrayContaining(['CreateSession', 'PaymentStatus', 'CheckoutStatus', 'AdminMerchants']));
  for (const r of without) expect([r.id, bundledInputs(r.entry).filter((input) => acquirerCode.test(input))]).toEqual([r.id, []]);
});

test('behind CloudFront the stack adds the origin check\'s secret reader to a route that reads no secret of its own', async () => {
  const entries = ['CheckoutStatus', 'AdminSession'].map((id) => ROUTES.find((r) => r.id === id)!.entry);
  const behindEdge = await bundleInputs(entries, [ORIGIN_SECRET_INJECT]);
  for (const entry of entries) {
    const inputs = behindEdge.get(entry) ?? [];
    expect(inputs).toContain(ORIGIN_SECRET_INJECT);
    expect(inputs.some((input) => SECRETS_MANAGER.test(input))).toBe(true);
  }
}, 120_000);

test("only the customer's pages carry the customer's page texts and renderer", () => {
  const customerPage = /lambdas\/checkout-page\/(texts\/|render\.ts)/;
  const portal = ROUTES.find((r) => r.id === 'AdminPortal')!;
  // The portal's error page is its own (lambdas/admin-portal/page.ts), English as the portal is.
  expect(bundledInputs(portal.entry).filter((input) => customerPage.test(input))).toEqual([]);
  expect(bundledInputs(ROUTES.find((r) => r.id === 'CheckoutPage')!.entry).some((input) => customerPage.test(input))).toBe(true);
});

test("no function carries the error catalog's documentation (docs/errors.md's text), only its codes and messages", async () => {
  for (const r of ENTRIES) expect([r.id, bundledInputs(r.entry).filter((input) => input.endsWith('lambdas/domain/error-docs.ts'))]).toEqual([r.id, []]);
  const { sourcemap: _s, ...options } = esbuildApiOptions();
  const built = await build({ ...options, absWorkingDir: PROJECT_ROOT, entryPoints: [join(PROJECT_ROOT, 'lambdas/handlers/payment-status.ts')], write: false, outfile: join(PROJECT_ROOT, '.route-bundles/status.mjs'), logLevel: 'error' });
  const text = built.outputFiles.find((f) => f.path.endsWith('.mjs'))!.text;
  expect(text).toContain('Payment not found.');
  expect(text).not.toContain('Payments of other merchants answer the same.');
}, 60_000);
