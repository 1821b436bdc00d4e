import { build } from 'esbuild';
import { join } from 'node:path';
import * as sdkChecksum from '@smithy/core/checksum';
import * as sdkRetry from '@smithy/core/retry';
import { BUNDLE_ALIASES, PROJECT_ROOT } from '../../lib/bundling';
import { esbuildApiOptions } from '../bench/bundles';

/**
 * The SDK stand-ins of lib/bundle-stubs/ (lib/bundling.ts BUNDLE_ALIASES), each bundled as the
 * functions bundle it (the aliases on, the SDK's ESM build) and evaluated here: what they replace is
 * gone from the bundles, what they keep answers as the SDK does, and the code they leave out says
 * so when it is asked for. test/integration/lambda-bundles.test.ts runs the bundled handlers.
 */
jest.setTimeout(60_000);

type Module = Record<string, unknown>;

/** A module's exports by name (the test's CommonJS interop adds `default` to a namespace import). */
const exportNames = (module: object): string[] => Object.keys(module).filter((k) => k !== 'default').sort();

/** A stub bundled as CommonJS and evaluated with `requireBuiltin` for Node's built-ins. */
async function bundled(stub: string, requireBuiltin: (id: string) => unknown = require): Promise<Module> {
  const { outputFiles } = await build({
    entryPoints: [join(PROJECT_ROOT, 'lib/bundle-stubs', stub)],
    absWorkingDir: PROJECT_ROOT,
    alias: { ...BUNDLE_ALIASES },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    mainFields: ['module', 'main'],
    write: false,
    logLevel: 'error',
  });
  const module = { exports: {} as Module };
  new Function('module', 'exports', 'require', outputFiles[0]!.text)(module, module.exports, requireBuiltin);
  return module.exports;
}

describe('what the aliases leave out of a function', () => {
  let inputs: string[];
  beforeAll(async () => {
    const { sourcemap: _s, ...options } = esbuildApiOptions();
    const result = await build({
      ...options,
      absWorkingDir: PROJECT_ROOT,
      entryPoints: ['test/bench/fixtures/aws-sdk-only.ts', 'lambdas/handlers/create-session.ts'],
      outdir: join(PROJECT_ROOT, '.bundle-stubs'),
      write: false,
      metafile: true,
      logLevel: 'error',
    });
    inputs = Object.values(result.metafile.outputs).flatMap((o) => (o.entryPoint ? Object.keys(o.inputs) : []));
  });

  test.each([
    ['event-stream codecs', /@smithy\/core\/dist-es\/submodules\/event-streams\//],
    ['endpoint discovery', /@aws-sdk\/middleware-endpoint-discovery\//],
    ['the default credential chain', /@aws-sdk\/credential-provider-node\//],
    ['adaptive retries', /retry\/util-retry\/(AdaptiveRetryStrategy|DefaultRateLimiter)\.js$/],
    ['the JavaScript SHA-256', /checksum\/sha256\/Sha256Js\.js$/],
  ])('leaves out %s', (_what, path) => {
    expect(inputs.length).toBeGreaterThan(0);
    expect(inputs.filter((i) => path.test(i))).toEqual([]);
  });

  test('the stand-ins are what the functions carry instead', () => {
    for (const stub of ['retry.ts', 'checksum.ts', 'event-streams.ts', 'endpoint-discovery.ts']) expect(inputs).toContain(`lib/bundle-stubs/${stub}`);
  });
});

describe('@smithy/core/retry without adaptive retries', () => {
  let stub: Module;
  const resolve = () => stub.resolveRetryConfig as typeof sdkRetry.resolveRetryConfig;
  beforeAll(async () => {
    stub = await bundled('retry.ts');
  });

  test('exports all that the SDK module exports', () => {
    expect(exportNames(stub).filter((k) => k !== 'ADAPTIVE_RETRIES_NOT_BUNDLED')).toEqual(exportNames(sdkRetry));
  });

  /** What a resolved configuration retries with: the strategy's mode, first delay and attempts. */
  async function described(config: ReturnType<typeof sdkRetry.resolveRetryConfig>) {
    const strategy = (await config.retryStrategy()) as unknown as { mode: string; baseDelay: number; maxAttemptsProvider: () => Promise<number>; constructor: { name: string } };
    return { strategy: strategy.constructor.name, mode: strategy.mode, baseDelay: strategy.baseDelay, attempts: await strategy.maxAttemptsProvider(), maxAttempts: await config.maxAttempts() };
  }

  const inputs: [string, () => Parameters<typeof sdkRetry.resolveRetryConfig>[0]][] = [
    ['our clients (maxAttempts 3, mode from the environment)', () => ({ maxAttempts: 3, retryMode: async () => 'standard' })],
    ['standard mode, no maxAttempts', () => ({ retryMode: 'standard' })],
    ['maxAttempts as a provider', () => ({ maxAttempts: async () => 5, retryMode: 'standard' })],
  ];
  test.each(inputs)('retries as the SDK does: %s', async (_name, input) => {
    for (const defaults of [undefined, { defaultMaxAttempts: 4 }, { defaultBaseDelay: 10 }]) {
      const ours = await described(resolve()(input(), defaults));
      expect(ours).toEqual(await described(sdkRetry.resolveRetryConfig(input(), defaults)));
      expect(ours.strategy).toBe('StandardRetryStrategy');
    }
  });

  test('a given strategy is the strategy, once', async () => {
    const given = new sdkRetry.StandardRetryStrategy(2);
    const config = resolve()({ retryMode: 'standard', retryStrategy: given });
    expect(await config.retryStrategy()).toBe(given);
    expect(await config.retryStrategy()).toBe(await config.retryStrategy());
  });

  test.each([
    ['a value', 'adaptive'],
    ['a provider (AWS_RETRY_MODE)', async () => 'adaptive'],
  ] as const)("retry mode 'adaptive' as %s fails the client's first call, saying why", async (_name, retryMode) => {
    expect((await sdkRetry.resolveRetryConfig({ retryMode }).retryStrategy()).constructor.name).toBe('AdaptiveRetryStrategy');
    await expect(resolve()({ retryMode }).retryStrategy()).rejects.toThrow(stub.ADAPTIVE_RETRIES_NOT_BUNDLED as string);
    expect(stub.ADAPTIVE_RETRIES_NOT_BUNDLED).toMatch(/@smithy\/core\/retry alias in lib\/bundling\.ts/);
  });
});

describe('@smithy/core/checksum without the JavaScript SHA-256', () => {
  type Hasher = { update(data: unknown): void; digest(): Promise<Uint8Array>; reset(): void; digestLength: number };
  type HasherClass = new (secret?: unknown) => Hasher;
  let stub: Module;
  const Ours = () => stub.Sha256 as HasherClass;
  const Sdk = sdkChecksum.Sha256 as unknown as HasherClass;
  beforeAll(async () => {
    stub = await bundled('checksum.ts');
  });

  test('exports all that the SDK module exports', () => {
    expect(exportNames(stub).filter((k) => k !== 'JS_SHA256_NOT_BUNDLED')).toEqual(exportNames(sdkChecksum));
    expect(stub.Md5).toBeDefined();
    expect(stub.Crc32).toBeDefined();
  });

  const bytes = new Uint8Array([0, 1, 2, 250, 251, 252, 253, 254, 255, 9]);
  const data: [string, unknown][] = [
    ['a string', 'AWS4-HMAC-SHA256\n20240101T000000Z\nü'],
    ['bytes', bytes],
    ['a view into a larger buffer', bytes.subarray(3, 8)],
    ['a Buffer', Buffer.from('{"TableName":"t"}')],
    ['nothing', ''],
  ];
  const keys: [string, unknown][] = [
    ['no key (a hash)', undefined],
    ['a string key', 'AWS4secret'],
    ['a bytes key', bytes],
    ['a key that is a view into a larger buffer', bytes.subarray(2, 7)],
    ['an ArrayBuffer key', bytes.slice().buffer],
    ['a key longer than a block', 'k'.repeat(100)],
  ];

  test.each(keys)('hashes as the SDK does, with %s', async (_name, key) => {
    expect(new (Ours())(key).digestLength).toBe(32);
    for (const [, value] of data) {
      const [ours, sdk] = [new (Ours())(key), new Sdk(key)];
      for (const h of [ours, sdk]) {
        h.update(value);
        h.update(bytes);
      }
      expect(Buffer.from(await ours.digest()).toString('hex')).toBe(Buffer.from(await sdk.digest()).toString('hex'));
    }
  });

  test('a hash digests more than once and starts over on reset, as the SDK does', async () => {
    const [ours, sdk] = [new (Ours())(), new Sdk()];
    const hex = async (h: Hasher) => Buffer.from(await h.digest()).toString('hex');
    for (const h of [ours, sdk]) h.update('a');
    expect(await hex(ours)).toBe(await hex(sdk));
    for (const h of [ours, sdk]) h.update('b');
    expect(await hex(ours)).toBe(await hex(sdk));
    for (const h of [ours, sdk]) {
      h.reset();
      h.update('c');
    }
    expect(await hex(ours)).toBe(await hex(sdk));
  });

  test('an HMAC takes nothing after its digest until reset, as the SDK does', async () => {
    const [ours, sdk] = [new (Ours())('key'), new Sdk('key')];
    for (const h of [ours, sdk]) await h.digest();
    expect(() => ours.update('x')).toThrow('Attempted to update an already finished hash.');
    expect(() => sdk.update('x')).toThrow('Attempted to update an already finished hash.');
    ours.reset();
    expect(() => ours.update('x')).not.toThrow();
  });

  test("a Node whose crypto cannot hash SHA-256 fails the first hash, saying why, instead of a JavaScript SHA-256", async () => {
    const noSha256 = await bundled('checksum.ts', (id) => {
      const real = require(id) as typeof import('node:crypto');
      return id.endsWith('crypto')
        ? {
            ...real,
            createHash: () => {
              throw new Error('Digest method not supported');
            },
          }
        : real;
    });
    expect(() => new (noSha256.Sha256 as HasherClass)()).toThrow(noSha256.JS_SHA256_NOT_BUNDLED as string);
    expect(noSha256.JS_SHA256_NOT_BUNDLED).toMatch(/@smithy\/core\/checksum alias in lib\/bundling\.ts/);
  });
});
