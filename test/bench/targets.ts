/** The targets of the performance issue, in one place; the report marks each pass or fail. */
export const TARGETS = {
  /** Minified handler bundle, without its source map. */
  bundleKib: 300,
  /** Median time to import a handler bundle in a fresh Node process, on the measuring machine. */
  coldImportMs: 40,
  /** Per merchant API request once the merchant's password is cached. */
  warmDynamoDbCalls: 1,
  warmSecretsManagerCalls: 0,
} as const;
