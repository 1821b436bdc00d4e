import { readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { PROJECT_ROOT } from '../../lib/bundling';
import { JOBS } from '../../lib/jobs';
import { bundleDefines } from '../../lib/portal-script';
import { FALLBACK_ROUTE, ROUTES } from '../../lib/routes';
import { RUNNER_BUNDLE_DIR } from './run-directory';

/**
 * The entry points the tests spawn (processes.ts startTs, runTs). One that is not here still runs,
 * through tsx.
 */
const SPAWNED_ENTRIES: readonly string[] = [
  'local/main.ts',
  'local/merchant-cli.ts',
  'local/operator-cli.ts',
  'local/sandbox-cli.ts',
  'local/callback-receiver.ts',
  'scripts/certify.ts',
];

/** Every handler module the runner can load: the route table's, the fallback route's and the jobs'. */
const handlerEntries = (): string[] => [...new Set([...ROUTES.map((r) => r.entry), FALLBACK_ROUTE.entry, ...JOBS.map((j) => j.entry)])];

/** Loaded from node_modules where they are, never bundled: dynalite reads its TLS files and its actions by computed path, and its LevelDB store is a native addon. */
const LEFT_IN_NODE_MODULES = /^(dynalite|classic-level)(\/|$)/;

const BUNDLED_ENTRIES_MODULE = join(PROJECT_ROOT, 'local/bundled-entries.ts');
const FILE_RELATIVE = /\b__dirname\b|\b__filename\b|\bimport\.meta\.url\b/;

/**
 * What makes the sources run as one file: the table of handler modules esbuild can follow, the
 * project's own files' paths as they are in the repository (a bundle in the temp dir must still
 * find PROJECT_ROOT, the docs certify reads, the fixtures), and the packages left where they are.
 */
const runnerPlugin: Plugin = {
  name: 'checkout-runner',
  setup(build) {
    build.onResolve({ filter: LEFT_IN_NODE_MODULES }, (args) => ({ path: require.resolve(args.path, { paths: [args.resolveDir] }), external: true }));
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path === BUNDLED_ENTRIES_MODULE) {
        const imports = handlerEntries().map((entry) => `  ${JSON.stringify(entry)}: () => import(${JSON.stringify(join(PROJECT_ROOT, entry))}),`);
        return { loader: 'ts', resolveDir: PROJECT_ROOT, contents: `export const BUNDLED_ENTRIES = {\n${imports.join('\n')}\n};\n` };
      }
      if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
      const source = readFileSync(args.path, 'utf8');
      if (!FILE_RELATIVE.test(source)) return undefined;
      return {
        loader: 'ts',
        contents: source
          .replace(/\b__dirname\b/g, JSON.stringify(dirname(args.path)))
          .replace(/\b__filename\b/g, JSON.stringify(args.path))
          .replace(/\bimport\.meta\.url\b/g, JSON.stringify(pathToFileURL(args.path).href)),
      };
    });
  },
};

/**
 * Bundles each spawned entry point into `<runDir>/runner-bundle/<entry>.cjs`, so a spawned runner
 * or CLI starts as plain JavaScript instead of through tsx's loader (processes.ts). CommonJS, as
 * tsx runs these sources (`require.main === module`, `__dirname`); not minified, and keeping names,
 * so errors, their names and stack traces read as from the sources (source maps on with
 * --enable-source-maps, as tsx turns them on). The Lambda options of lib/bundling.ts are not
 * the ones: ESM for Node 24, minified, and the SDK's credential chain replaced by Lambda's.
 */
export async function buildRunnerBundle(runDir: string): Promise<void> {
  await build({
    absWorkingDir: PROJECT_ROOT,
    entryPoints: SPAWNED_ENTRIES.map((entry) => join(PROJECT_ROOT, entry)),
    outbase: PROJECT_ROOT,
    // <entry>.cjs under it, where run-directory.ts bundleFileOf looks.
    outdir: join(runDir, RUNNER_BUNDLE_DIR),
    outExtension: { '.js': '.cjs' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: true,
    sourcesContent: false,
    keepNames: true,
    // The portal's browser script as a constant, as in the Lambda bundles (not esbuild at run time).
    define: bundleDefines(),
    plugins: [runnerPlugin],
    logLevel: 'silent',
  });
}
