import { spawnSync } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';

/**
 * Which Chromium the browser tests drive, in this order:
 * 1. `CHROMIUM_PATH`, when set (a browser the developer chose);
 * 2. a system Chromium (`chromium`, `chromium-browser`, `google-chrome` on the PATH);
 * 3. the Chromium shipped in the `@sparticuz/chromium` npm package, so `npm ci && npm test` needs
 *    no browser on the machine. `CHECKOUT_TEST_BROWSER=bundled` forces this one.
 */
export interface ChosenBrowser {
  readonly executablePath: string;
  readonly source: 'CHROMIUM_PATH' | 'system' | 'bundled';
  /** Environment the browser process needs on top of ours (the bundled one's libraries and fonts). */
  readonly env: Readonly<Record<string, string>>;
}

const SYSTEM_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

const PACKAGE = '@sparticuz/chromium';
/** Where the bundled browser is unpacked once: the package's usual target is the system temp dir, which tests must leave clean. */
const CACHE_ROOT = resolve(__dirname, '../../node_modules/.cache/checkout-chromium');

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first system Chromium on the PATH, if any. */
export function systemChromium(pathVariable = process.env.PATH ?? ''): string | undefined {
  for (const dir of pathVariable.split(delimiter).filter(Boolean)) {
    for (const name of SYSTEM_NAMES) {
      const candidate = join(dir, name);
      if (executable(candidate)) return candidate;
    }
  }
  return undefined;
}

function packageBinDir(): string {
  // The package's exports name only its entry (build/index.js); its archives are in bin/ beside build/.
  return join(dirname(require.resolve(PACKAGE)), '..', 'bin');
}

function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(packageBinDir(), '..', 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

function untar(archive: Buffer, into: string): void {
  mkdirSync(into, { recursive: true });
  const result = spawnSync('tar', ['-x', '-C', into], { input: archive, stdio: ['pipe', 'ignore', 'pipe'] });
  if (result.status !== 0) throw new Error(`tar failed unpacking the bundled Chromium: ${result.stderr?.toString() || result.error?.message}`);
}

/**
 * Unpacks the package's Chromium (brotli archives: the browser, its NSS libraries built for Amazon
 * Linux, SwiftShader, fonts) into node_modules/.cache once per version. Parallel test workers may
 * race: each unpacks into its own directory and renames it into place; the loser discards its copy.
 * Returns the directory holding `chromium`.
 */
export function unpackBundledChromium(): string {
  const target = join(CACHE_ROOT, packageVersion());
  if (existsSync(join(target, 'chromium'))) return target;
  const bin = packageBinDir();
  const staging = `${target}.unpacking-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    writeFileSync(join(staging, 'chromium'), brotliDecompressSync(readFileSync(join(bin, 'chromium.br'))));
    chmodSync(join(staging, 'chromium'), 0o755);
    untar(brotliDecompressSync(readFileSync(join(bin, 'swiftshader.tar.br'))), staging);
    untar(brotliDecompressSync(readFileSync(join(bin, 'al2023.tar.br'))), join(staging, 'al2023'));
    untar(brotliDecompressSync(readFileSync(join(bin, 'fonts.tar.br'))), staging);
    // The package's own fonts.conf points at /tmp; ours points into the cache (font cache included).
    writeFileSync(
      join(staging, 'fonts', 'fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(target, 'fonts')}</dir>\n  <dir>/usr/share/fonts</dir>\n  <cachedir>${join(target, 'fonts-cache')}</cachedir>\n</fontconfig>\n`,
    );
    renameSync(staging, target);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    // Another worker won the race: its copy is complete.
    if (existsSync(join(target, 'chromium'))) return target;
    throw error;
  }
  return target;
}

export function bundledChromium(): ChosenBrowser {
  const dir = unpackBundledChromium();
  return {
    executablePath: join(dir, 'chromium'),
    source: 'bundled',
    env: {
      // Its NSS libraries (a bare machine has none) and SwiftShader's, before the system's.
      LD_LIBRARY_PATH: [join(dir, 'al2023', 'lib'), dir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(delimiter),
      FONTCONFIG_PATH: join(dir, 'fonts'),
    },
  };
}

/** The browser the tests use (see ChosenBrowser). */
export function chooseBrowser(env: NodeJS.ProcessEnv = process.env): ChosenBrowser {
  const forced = env.CHECKOUT_TEST_BROWSER;
  if (forced !== undefined && forced !== '' && forced !== 'bundled' && forced !== 'auto') {
    throw new Error(`CHECKOUT_TEST_BROWSER must be "bundled" or "auto", got ${JSON.stringify(forced)}`);
  }
  if (forced === 'bundled') return bundledChromium();
  if (env.CHROMIUM_PATH) {
    if (!executable(env.CHROMIUM_PATH)) throw new Error(`CHROMIUM_PATH=${env.CHROMIUM_PATH} is not an executable file`);
    return { executablePath: env.CHROMIUM_PATH, source: 'CHROMIUM_PATH', env: {} };
  }
  const system = systemChromium(env.PATH);
  if (system) return { executablePath: system, source: 'system', env: {} };
  return bundledChromium();
}
