/** The targets of the performance issues, in one place; the report marks each pass or fail. */
export const TARGETS = {
  /** Minified handler bundle, without its source map: the merchant API's and the customer's pages' routes. */
  bundleKib: 300,
  /** The same for every other function: the portal's routes, the `$default` route, the jobs, the stream dispatcher. */
  otherBundleKib: 200,
  /** Median time to import a handler bundle in a fresh Node process: at most this much over the SDK-only row of the same run. */
  coldImportOverSdkMs: 15,
  /** Per merchant API request once the merchant's password is cached. */
  warmDynamoDbCalls: 1,
  warmSecretsManagerCalls: 0,
  /** Write units per completed checkout, table and indexes, on the cloud's path and the local runner's alike. */
  writeUnits: { plain: 10, '3ds': 20 },
  /** Completed checkouts a second, all merchants together, before any partition passes 1,000 write units a second. */
  checkoutsPerSecond: 10_000,
} as const;

/** Which size target a function is held to. */
export type BundleGroup = 'customer' | 'other';

export const bundleTargetKib = (group: BundleGroup): number => (group === 'customer' ? TARGETS.bundleKib : TARGETS.otherBundleKib);
