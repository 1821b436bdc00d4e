import { build, type BuildOptions, type Metafile } from 'esbuild';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { acquirerDefine, ESBUILD_OPTIONS, PROJECT_ROOT } from '../../lib/bundling';
import { bundleDefines } from '../../lib/portal-script';
import { ROUTES } from '../../lib/routes';

export interface BundleSpec {
  /** Row label; route id for handlers. */
  readonly name: string;
  /** Handlers are held to the targets; references only give context. */
  readonly kind: 'handler' | 'reference';
  /** A handler's size target (test/bench/targets.ts): the merchant's and customer's routes, or the rest. */
  readonly group?: 'customer' | 'other';
  /** Absolute path of the entry module. */
  readonly entry: string;
  /** Replaces the project's alias table (the naive reference bundles with none). */
  readonly alias?: Readonly<Record<string, string>>;
  /** Packages left out of the bundle and loaded from node_modules at import (as a runtime's own copy would be). */
  readonly external?: readonly string[];
  /** The stage's acquirer the bundle is built for, as the stack builds it (lib/bundling.ts acquirerDefine); none: both. */
  readonly acquirer?: 'sandbox' | 's2s-card';
  readonly note?: string;
}

export interface PackageBytes {
  /** npm package name, or "(project)" for this repository's own files. */
  readonly name: string;
  readonly bytes: number;
}

export interface Bundle {
  readonly spec: BundleSpec;
  readonly file: string;
  /** Size of the minified .mjs as deployed (the source map is a separate file). */
  readonly bytes: number;
  readonly gzipBytes: number;
  /** Output bytes by package, largest first, from esbuild's metafile. */
  readonly packages: readonly PackageBytes[];
}

/**
 * ESBUILD_OPTIONS in the shape of esbuild's JS API. The options are written for CDK's
 * NodejsFunction, whose one difference is the banner: a string there, `{ js }` here. The defines
 * are the stack's too (the portal's browser script).
 */
export function esbuildApiOptions(): BuildOptions {
  const { banner, mainFields, external, alias, ...rest } = ESBUILD_OPTIONS;
  return { ...rest, banner: { js: banner }, mainFields: [...mainFields], external: [...external], alias: { ...alias }, define: bundleDefines() };
}

const PACKAGE_OF = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//;

export function packageOf(inputPath: string): string {
  const all = [...inputPath.matchAll(new RegExp(PACKAGE_OF.source, 'g'))];
  return all.length ? (all[all.length - 1]?.[1] as string) : '(project)';
}

function bytesByPackage(metafile: Metafile, outfile: string): PackageBytes[] {
  const output = Object.entries(metafile.outputs).find(([path]) => join(PROJECT_ROOT, path) === outfile)?.[1];
  if (!output) throw new Error(`esbuild metafile has no output ${outfile}`);
  const totals = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const name = packageOf(input);
    totals.set(name, (totals.get(name) ?? 0) + bytesInOutput);
  }
  return [...totals].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}

const fileNameOf = (spec: BundleSpec) => spec.name.replace(/[^A-Za-z0-9-]+/g, '-');

/**
 * Bundles every entry exactly as the stack does, into outDir/<name>.mjs (+ .map). Entries that
 * share an alias table go through one esbuild build: the output is byte-identical to one build
 * per entry, and the SDK is parsed once instead of once per route.
 */
export async function buildBundles(specs: readonly BundleSpec[], outDir: string): Promise<Bundle[]> {
  const options = esbuildApiOptions();
  const groups = new Map<string, BundleSpec[]>();
  for (const spec of specs) {
    const key = JSON.stringify([spec.alias ?? options.alias, spec.acquirer ?? null, spec.external ?? []]);
    groups.set(key, [...(groups.get(key) ?? []), spec]);
  }
  const built = await Promise.all(
    [...groups.values()].map(async (group) => {
      const alias = group[0]?.alias;
      const acquirer = group[0]?.acquirer;
      const external = group[0]?.external;
      const result = await build({
        ...options,
        ...(alias ? { alias: { ...alias } } : {}),
        ...(external ? { external: [...(options.external ?? []), ...external] } : {}),
        ...(acquirer ? { define: { ...options.define, ...acquirerDefine(acquirer) } } : {}),
        absWorkingDir: PROJECT_ROOT,
        entryPoints: group.map((spec) => ({ in: spec.entry, out: fileNameOf(spec) })),
        outdir: outDir,
        outExtension: { '.js': '.mjs' },
        metafile: true,
        logLevel: 'error',
      });
      return group.map((spec): Bundle => {
        const file = join(outDir, `${fileNameOf(spec)}.mjs`);
        const code = readFileSync(file);
        return { spec, file, bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, packages: bytesByPackage(result.metafile, file) };
      });
    }),
  );
  const bySpec = new Map(built.flat().map((b) => [b.spec, b]));
  return specs.map((spec) => bySpec.get(spec) as Bundle);
}

export const projectPath = (...segments: string[]): string => join(PROJECT_ROOT, ...segments);
export const fromProject = (absolute: string): string => relative(PROJECT_ROOT, absolute);

/** The routes invoked against the local backend (bench, test/integration/lambda-bundles.test.ts): one money flow end to end. */
export const INVOKED_ROUTES = ['CreateSession', 'PaymentStatus', 'CheckoutPage', 'CheckoutStatus', 'CheckoutPay', 'RefundPayment'];

/** Those routes bundled exactly as a sandbox stage deploys them (the local backend's acquirer), into a fresh outDir. */
export function sandboxBundles(outDir: string): Promise<Bundle[]> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  return buildBundles(
    ROUTES.filter((r) => INVOKED_ROUTES.includes(r.id)).map((r): BundleSpec => ({ name: r.id, kind: 'handler', entry: join(PROJECT_ROOT, r.entry), acquirer: 'sandbox' })),
    outDir,
  );
}
