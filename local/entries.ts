import { resolve } from 'node:path';
import { BUNDLED_ENTRIES } from './bundled-entries';

const PROJECT_ROOT = resolve(__dirname, '..');

/** The module of a route's or job's entry (a path from the repository's root, as the tables write it). */
export async function importEntry(entry: string): Promise<unknown> {
  if (!BUNDLED_ENTRIES) return import(resolve(PROJECT_ROOT, entry));
  const load = BUNDLED_ENTRIES[entry];
  if (!load) throw new Error(`${entry} is not in this bundle of the runner, which holds the entries of ROUTES, FALLBACK_ROUTE and JOBS`);
  return load();
}
