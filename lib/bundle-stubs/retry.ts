/**
 * Bundled in place of @smithy/core/retry (see lib/bundling.ts): the SDK's own module, with one
 * function replaced. Its resolveRetryConfig builds every client's retry strategy and, should the
 * retry mode be 'adaptive', an AdaptiveRetryStrategy with a client-side rate limiter (about 3 KB in
 * every bundle). No function of ours runs in adaptive mode: no client is given a `retryMode`, the
 * stack sets no AWS_RETRY_MODE, Lambda has no shared config file, and every defaults mode of the SDK
 * says 'standard'. The replacement is the SDK's function without that branch; a client that is
 * ever asked for adaptive retries fails its first call loudly instead of silently retrying
 * differently. test/unit/bundle-stubs.test.ts holds it to the SDK's function for every other input.
 */
import { normalizeProvider } from '@smithy/core/client';
import type { resolveRetryConfig as sdkResolveRetryConfig } from '@smithy/core/retry';
// The SDK's JavaScript (its types are @smithy/core/retry's): the alias covers the package path only.
// @ts-expect-error -- a file of the package's ESM build, which ships no declarations beside it
export * from '../../node_modules/@smithy/core/dist-es/submodules/retry/index.js';
// @ts-expect-error -- as above
import { DEFAULT_MAX_ATTEMPTS, Retry, RETRY_MODES, StandardRetryStrategy } from '../../node_modules/@smithy/core/dist-es/submodules/retry/index.js';

export const ADAPTIVE_RETRIES_NOT_BUNDLED =
  "Retry mode 'adaptive' (AWS_RETRY_MODE or a client's retryMode) is not bundled: remove the @smithy/core/retry alias in lib/bundling.ts";

type Input = Parameters<typeof sdkResolveRetryConfig>[0];
type Defaults = Parameters<typeof sdkResolveRetryConfig>[1];

export const resolveRetryConfig = (<T>(input: T & Input, defaults?: Defaults) => {
  const { retryStrategy, retryMode } = input;
  const { defaultMaxAttempts = DEFAULT_MAX_ATTEMPTS as number, defaultBaseDelay = Retry.delay() as number } = defaults ?? {};
  const maxAttemptsProvider = normalizeProvider(input.maxAttempts ?? defaultMaxAttempts);
  let controller: Promise<unknown> | undefined = retryStrategy ? Promise.resolve(retryStrategy) : undefined;
  const getDefault = async () => {
    const maxAttempts = await maxAttemptsProvider();
    if ((await normalizeProvider(retryMode)()) === RETRY_MODES.ADAPTIVE) throw new Error(ADAPTIVE_RETRIES_NOT_BUNDLED);
    return new StandardRetryStrategy({ maxAttempts, baseDelay: defaultBaseDelay });
  };
  return Object.assign(input, {
    maxAttempts: maxAttemptsProvider,
    retryStrategy: () => (controller ??= getDefault()),
  });
}) as typeof sdkResolveRetryConfig;
