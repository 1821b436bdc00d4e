import * as fs from 'node:fs';
import * as path from 'node:path';
import type { App } from 'aws-cdk-lib';
import { CheckoutStack } from '../../lib/checkout-stack';
import { stackName } from '../../lib/naming';
import { FALLBACK_ROUTE, ROUTES } from '../../lib/routes';
import { PROD_ACQUIRER_CONTEXT, testApp } from './synth';

/**
 * Source maps (ADR 0036): prod runs without --enable-source-maps, so a map in its zip would only be
 * downloaded and unpacked at every cold start. prod's maps go beside the assets, into the cloud
 * assembly's `source-maps/` (archived with the deploy); the other stages, which read stack traces
 * through them, keep each map in its asset. Bundled for real here: two routes and the $default
 * route, each by CDK's own esbuild run and hooks; the maps also show each stage's functions carry
 * its own acquirer's code only.
 */
const ONE_ROUTE = ROUTES.filter((r) => r.id === 'PaymentStatus' || r.id === 'RefundPayment');

function bundled(stage: 'prod' | 'dev') {
  // Every stack bundled (CDK's default), as `cdk synth` and `cdk deploy` do.
  const app = testApp({ context: { stage, ...(stage === 'prod' ? PROD_ACQUIRER_CONTEXT : {}) } });
  const stack = new CheckoutStack(app, stackName(stage), { stage, routes: ONE_ROUTE, jobs: [] });
  const assembly = app.synth().directory;
  // Each bundled function is one asset directory (asset.<hash>) of the cloud assembly.
  const assets = fs
    .readdirSync(assembly)
    .filter((name) => name.startsWith('asset.') && fs.statSync(path.join(assembly, name)).isDirectory())
    .map((name) => path.join(assembly, name))
    .filter((dir) => fs.existsSync(path.join(dir, 'index.mjs')));
  return { stack, assembly, assets, fns: [...stack.functions.values(), stack.fallbackFunction] };
}

describe('source maps', () => {
  test('prod: each zip holds its bundle only; its map is in the assembly\'s source-maps/ and maps that bundle', () => {
    const { stack, assembly, assets, fns } = bundled('prod');
    expect(assets.length).toBeGreaterThanOrEqual(fns.length);
    for (const dir of assets) expect(fs.readdirSync(dir)).toEqual(['index.mjs']);
    for (const [fn, entry] of [[stack.functions.get('PaymentStatus')!, ONE_ROUTE[0]!.entry], [stack.fallbackFunction, FALLBACK_ROUTE.entry]] as const) {
      if (fn.sourceMap === 'in-asset') throw new Error(`${fn.node.path} keeps its map in its asset on prod`);
      expect(fn.sourceMap.directory.startsWith(path.join(assembly, 'source-maps', stack.stackName) + path.sep)).toBe(true);
      const map = JSON.parse(fs.readFileSync(path.join(fn.sourceMap.directory, 'index.mjs.map'), 'utf8')) as { version: number; sources: string[] };
      expect(map.version).toBe(3);
      expect(map.sources.some((s) => s.endsWith(entry))).toBe(true);
    }
    // The stage's acquirer only (lambdas/wiring/acquirer.ts): prod's refund function carries the S2S CARD connector and no sandbox.
    const refund = stack.functions.get('RefundPayment')!;
    if (refund.sourceMap === 'in-asset') throw new Error('RefundPayment keeps its map in its asset on prod');
    const sources = (JSON.parse(fs.readFileSync(path.join(refund.sourceMap.directory, 'index.mjs.map'), 'utf8')) as { sources: string[] }).sources;
    expect(sources.some((s) => s.includes('lambdas/adapters/s2s-card/s2s-card-acquirer.ts'))).toBe(true);
    // (A module whose only export left is a constant may still be named in the map, with no code: the sandbox's ledger and bank are not.)
    expect(sources.filter((s) => /lambdas\/adapters\/sandbox-acquirer\/(ledger-store|bank|challenge)\.ts$/.test(s))).toEqual([]);
  }, 120_000);

  test('dev: the map stays in the asset, read at run time through --enable-source-maps', () => {
    const { stack, assets, fns } = bundled('dev');
    for (const fn of fns) expect(fn.sourceMap).toBe('in-asset');
    expect(assets.length).toBeGreaterThanOrEqual(fns.length);
    for (const dir of assets) expect(fs.readdirSync(dir).sort()).toEqual(['index.mjs', 'index.mjs.map']);
    expect(fs.existsSync(path.join((stack.node.root as App).outdir, 'source-maps'))).toBe(false);
    // dev runs on the sandbox: its functions carry no S2S CARD connector.
    const maps = assets.map((dir) => (JSON.parse(fs.readFileSync(path.join(dir, 'index.mjs.map'), 'utf8')) as { sources: string[] }).sources);
    const refund = maps.find((sources) => sources.some((s) => s.endsWith('lambdas/handlers/refund-payment.ts')))!;
    expect(refund.some((s) => s.includes('lambdas/adapters/sandbox-acquirer/sandbox-acquirer.ts'))).toBe(true);
    expect(refund.filter((s) => /lambdas\/adapters\/s2s-card\/(transformers|ledger-reading|client)\.ts$/.test(s))).toEqual([]);
  }, 120_000);
});
