import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { countryCodesFromSource, currencyExponentsFromSource, renderIsoData } from '../../scripts/iso-data';
import { countryList, isCountryCode } from '../../lambdas/domain/contact';
import { currencyExponent } from '../../lambdas/domain/money';

describe('the generated ISO tables', () => {
  it('are current with the maintained packages (run npm run data:iso when this fails)', () => {
    const checkedIn = readFileSync(resolve(__dirname, '../../lambdas/domain/generated/iso-data.ts'), 'utf8');
    expect(checkedIn).toBe(renderIsoData());
  });

  it('hold every monetary currency with its ISO 4217 exponent and no metal or testing code', () => {
    const source = currencyExponentsFromSource();
    for (const [code, digits] of Object.entries(source)) expect(currencyExponent(code)).toBe(digits);
    for (const code of ['XAU', 'XAG', 'XTS', 'XXX', 'XDR']) expect(currencyExponent(code)).toBeUndefined();
    expect(Object.keys(source).length).toBeGreaterThan(150);
  });

  it('hold every assigned country code', () => {
    const codes = countryCodesFromSource();
    expect(codes.length).toBeGreaterThan(240);
    for (const code of codes) expect(isCountryCode(code)).toBe(true);
    expect(isCountryCode('XK')).toBe(false);
  });

  it('give the page a name for every country, sorted by name', () => {
    const list = countryList('en');
    expect(list).toHaveLength(countryCodesFromSource().length);
    expect(Object.fromEntries(list).DE).toBe('Germany');
    expect(Object.fromEntries(list).AX).toBe('Åland Islands');
    const names = list.map(([, name]) => name);
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b, 'en')));
    expect(list.every(([code, name]) => name !== code)).toBe(true);
  });
});
