import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { ADMIN_API } from '../../lib/admin-api';
import { PROJECT_ROOT } from '../../lib/bundling';
import { buildPortalScript, PORTAL_SCRIPT_ENTRY } from '../../lib/portal-script';
import { ROUTES, routeKey } from '../../lib/routes';
import { operatorAmountLiteral } from '../../lambdas/domain/money';
import { esbuildApiOptions } from '../bench/bundles';

/**
 * The portal's browser script: typed modules bundled by lib/portal-script.ts, calling the admin
 * API by the route table's own paths (lib/admin-api.ts) and reading typed amounts by the API's rule.
 */
const script = buildPortalScript();

describe('the routes the portal calls', () => {
  const adminRoutes = ROUTES.filter((r) => r.path.startsWith('/admin/api'));

  it("are the route table's admin routes, each by its id and key", () => {
    expect(ADMIN_API).toEqual(Object.fromEntries(adminRoutes.map((r) => [r.id, routeKey(r)])));
  });

  it('are spelled in the bundle only as the route table spells them', () => {
    const paths = new Set(adminRoutes.map((r) => r.path));
    const inBundle = [...script.matchAll(/\/admin\/api[^"'`\s]*/g)].map((m) => m[0]);
    expect(inBundle.length).toBeGreaterThan(0);
    expect(inBundle.filter((p) => !paths.has(p))).toEqual([]);
  });
});

describe('the bundle', () => {
  it('is one script the page can inline, of a reasonable weight', () => {
    expect(script).not.toMatch(/<\/script/i);
    expect(script).not.toMatch(/\bimport\s*\(|\brequire\(/);
    // Today about 38 KB (13 KB gzip), as the hand-written script was; the bound catches a stray dependency.
    expect(script.length).toBeLessThan(60_000);
    expect(gzipSync(script).length).toBeLessThan(20_000);
  });

  it('comes from typed modules of under 400 lines each', () => {
    const dir = join(PORTAL_SCRIPT_ENTRY, '..');
    const files = (d: string): string[] => readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? files(join(d, f)) : [join(d, f)]));
    const sources = [...files(dir), join(dir, '../hosted-sign-in.ts')];
    for (const file of sources) {
      const text = readFileSync(file, 'utf8');
      expect([relative(PROJECT_ROOT, file), text.includes('@ts-nocheck')]).toEqual([relative(PROJECT_ROOT, file), false]);
      expect([relative(PROJECT_ROOT, file), text.split('\n').length < 400]).toEqual([relative(PROJECT_ROOT, file), true]);
    }
  });

  it("is compiled into the portal function's bundle as the stack builds it, without esbuild", async () => {
    const out = mkdtempSync(join(tmpdir(), 'portal-bundle-'));
    try {
      const result = await build({ ...esbuildApiOptions(), entryPoints: [join(PROJECT_ROOT, 'lambdas/handlers/admin-portal.ts')], outfile: join(out, 'index.mjs'), sourcemap: false, metafile: true, logLevel: 'error' });
      const inputs = Object.keys(result.metafile.inputs);
      expect(inputs.filter((i) => /node_modules\/esbuild\/|lib\/portal-script|admin-portal\/client\//.test(i))).toEqual([]);
      // Only the script spells the API's paths and its texts; esbuild re-escapes the string as it prints it.
      const bundle = readFileSync(join(out, 'index.mjs'), 'utf8');
      expect(['/admin/api/capture-queue/bulk', 'Your session has ended. Sign in again.'].filter((s) => !bundle.includes(s))).toEqual([]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('an amount the operator typed, as the confirmation shows it and the API reads it', () => {
  it.each([
    ['100', 'EUR', '100.00'],
    ['12.5', 'EUR', '12.50'],
    ['12,50', 'EUR', '12.50'],
    [' 007 ', 'EUR', '7.00'],
    ['12.', 'EUR', '12.00'],
    ['1250', 'JPY', '1250'],
    ['1.025', 'KWD', '1.025'],
    ['12.505', 'EUR', undefined],
    ['12.5', 'JPY', undefined],
    ['12.', 'JPY', undefined],
    ['-1', 'EUR', undefined],
    ['1e3', 'EUR', undefined],
    ['', 'EUR', undefined],
    ['1234567890123456', 'EUR', undefined],
  ])('%j in %s is %j', (typed, currency, literal) => {
    expect(operatorAmountLiteral(typed, currency)).toBe(literal);
  });
});
