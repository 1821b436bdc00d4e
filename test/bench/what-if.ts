import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Stand-ins for the country and currency data sets holding only the fields the merchant API
 * reads (alpha-2 codes; currency code and minor-unit digits). Used for one "what if" bundle
 * that estimates the gain of slimmer tables in lambdas/domain; never deployed.
 */
export async function compactDataAliases(dir: string): Promise<Record<string, string>> {
  // Laid out as packages so the metafile still attributes the bytes to iso-3166 and currency-codes.
  mkdirSync(join(dir, 'node_modules', 'iso-3166'), { recursive: true });
  mkdirSync(join(dir, 'node_modules', 'currency-codes'), { recursive: true });
  const { iso31661 } = (await import('iso-3166')) as { iso31661: { alpha2: string }[] };
  const currencies = ((await import('currency-codes/data')) as unknown as { default: { code: string; digits: number }[] }).default;
  const countries = join(dir, 'node_modules', 'iso-3166', 'index.mjs');
  const currencyTable = join(dir, 'node_modules', 'currency-codes', 'data.mjs');
  // The shape the proposal would ship: one string of codes, one code→digits map.
  const codes = iso31661.map((c) => c.alpha2).join(' ');
  const digits = Object.fromEntries(currencies.map((c) => [c.code, c.digits]));
  writeFileSync(countries, `export const iso31661 = ${JSON.stringify(codes)}.split(' ').map((alpha2) => ({ alpha2, name: alpha2 }));\n`);
  writeFileSync(currencyTable, `export default Object.entries(${JSON.stringify(digits)}).map(([code, digits]) => ({ code, digits }));\n`);
  return { 'iso-3166': countries, 'currency-codes/data': currencyTable };
}
