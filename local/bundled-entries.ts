/**
 * The route and job tables' handler modules, by entry, when the runner runs as one bundle: the
 * tests' build (test/support/runner-bundle.ts) puts a static import of every entry of ROUTES,
 * FALLBACK_ROUTE and JOBS in place of this module, since esbuild cannot follow an import of a
 * computed path. Run from the sources (`npm start`, tsx) there is none: local/entries.ts imports
 * each entry from its file.
 */
export const BUNDLED_ENTRIES: Readonly<Record<string, () => Promise<unknown>>> | undefined = undefined;
