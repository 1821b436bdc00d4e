import fc from 'fast-check';
import { MAX_AMOUNT_MINOR, currencyExponent, formatMinor, isKnownCurrency, parseAmount } from '../../lambdas/domain/money';

describe('currency exponents come from the ISO 4217 data', () => {
  it.each(['CLP', 'VND', 'ISK', 'UGX', 'KRW', 'JPY'])('%s has no decimals (exponent 0)', (currency) => {
    expect(currencyExponent(currency)).toBe(0);
  });

  it.each(['BHD', 'JOD', 'KWD', 'OMR', 'TND'])('%s has three decimals (exponent 3)', (currency) => {
    expect(currencyExponent(currency)).toBe(3);
  });

  it.each(['USD', 'EUR', 'GBP'])('%s has two decimals', (currency) => {
    expect(currencyExponent(currency)).toBe(2);
  });

  it.each(['usd', 'US', 'USDD', 'ZZZ', ''])('%p is not a currency', (code) => {
    expect(isKnownCurrency(code)).toBe(false);
    expect(currencyExponent(code)).toBeUndefined();
  });

  it.each(['XAU', 'XAG', 'XPT', 'XPD', 'XDR', 'XTS', 'XXX', 'XBA', 'XSU', 'XUA'])(
    '%s has no minor unit in ISO 4217 (not money we can take)',
    (code) => {
      expect(isKnownCurrency(code)).toBe(false);
    },
  );

  it.each(['XAF', 'XOF', 'XPF', 'XCD'])('%s is a real currency despite its X code', (code) => {
    expect(isKnownCurrency(code)).toBe(true);
  });
});

describe('parseAmount reads the merchant literal in the currency format', () => {
  it.each([
    ['0.19', 'USD', 19],
    ['10.00', 'USD', 1000],
    ['1500', 'JPY', 1500],
    ['1', 'KRW', 1],
    ['10.250', 'KWD', 10250],
    ['0.001', 'BHD', 1],
    ['007.50', 'USD', 750],
    ['100000000000.00', 'USD', MAX_AMOUNT_MINOR],
  ])('%p %s is %d minor units, literal kept as sent', (literal, currency, amountMinor) => {
    expect(parseAmount(literal, currency)).toEqual({ literal, amountMinor, currency });
  });

  it.each([
    [0.19, 'USD', '0.19', 19],
    [10, 'USD', '10.00', 1000],
    [10.5, 'USD', '10.50', 1050],
    [1500, 'JPY', '1500', 1500],
    [10.25, 'KWD', '10.250', 10250],
  ])('the JSON number %p %s reads as %p (its currency format)', (input, currency, literal, amountMinor) => {
    expect(parseAmount(input, currency)).toEqual({ literal, amountMinor, currency });
  });

  it.each([
    ['', 'USD', 'blank'],
    ['   ', 'USD', 'blank'],
    ['0.00', 'USD', 'not-positive'],
    ['0', 'JPY', 'not-positive'],
    ['0.000', 'KWD', 'not-positive'],
    ['-1.00', 'USD', 'not-positive'],
    ['-0.01', 'USD', 'not-positive'],
    [0, 'USD', 'not-positive'],
    [-5, 'USD', 'not-positive'],
    ['1', 'USD', 'format'],
    ['1.0', 'USD', 'format'],
    ['1.000', 'USD', 'format'],
    ['.50', 'USD', 'format'],
    ['1.', 'USD', 'format'],
    ['1500.00', 'JPY', 'format'],
    ['10.25', 'KWD', 'format'],
    ['10.2500', 'KWD', 'format'],
    ['1e5', 'USD', 'format'],
    ['0x10', 'JPY', 'format'],
    ['Infinity', 'USD', 'format'],
    ['NaN', 'USD', 'format'],
    ['+1.00', 'USD', 'format'],
    ['1,00', 'USD', 'format'],
    ['1 000.00', 'USD', 'format'],
    [' 1.00', 'USD', 'format'],
    ['1.00\n', 'USD', 'format'],
    ['١.٠٠', 'USD', 'format'],
    ['-', 'USD', 'format'],
    ['--1.00', 'USD', 'format'],
    ['100000000000.01', 'USD', 'format'],
    ['9999999999999999.00', 'USD', 'format'],
    [1.5, 'JPY', 'format'],
    [0.001, 'USD', 'format'],
    [10.255, 'USD', 'format'],
    [1e20, 'USD', 'format'],
    [Number.POSITIVE_INFINITY, 'USD', 'format'],
    [Number.NaN, 'USD', 'format'],
    ['1.00', 'XYZ', 'format'],
    ['1.00', 'usd', 'format'],
  ])('%j %s is refused as %s', (input, currency, problem) => {
    expect(parseAmount(input, currency)).toBe(problem);
  });

  it('refuses a 300-digit amount as format, without losing precision on the way', () => {
    expect(parseAmount('1'.repeat(300), 'JPY')).toBe('format');
  });
});

describe('formatMinor writes minor units in the currency format', () => {
  it.each([
    [19, 'USD', '0.19'],
    [5, 'USD', '0.05'],
    [0, 'USD', '0.00'],
    [1000, 'USD', '10.00'],
    [1500, 'JPY', '1500'],
    [1025, 'KWD', '1.025'],
    [1, 'BHD', '0.001'],
  ])('%d %s is %p', (amountMinor, currency, text) => {
    expect(formatMinor(amountMinor, currency)).toBe(text);
  });

  it.each([-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1])('refuses %p', (amountMinor) => {
    expect(() => formatMinor(amountMinor, 'USD')).toThrow(RangeError);
  });
});

const CURRENCIES = ['USD', 'EUR', 'JPY', 'KRW', 'CLP', 'VND', 'ISK', 'UGX', 'BHD', 'JOD', 'KWD', 'OMR', 'TND', 'CLF'];
const currency = fc.constantFrom(...CURRENCIES);
const amountMinor = fc.integer({ min: 1, max: MAX_AMOUNT_MINOR });

describe('properties', () => {
  it('formatMinor then parseAmount is the identity on every valid amount', () => {
    fc.assert(
      fc.property(currency, amountMinor, (c, minor) => {
        const literal = formatMinor(minor, c);
        expect(parseAmount(literal, c)).toEqual({ literal, amountMinor: minor, currency: c });
      }),
    );
  });

  it('the amountMinor of a literal equals integer arithmetic on its digits', () => {
    const exponentOf = (c: string) => currencyExponent(c) as number;
    const literalArb = currency.chain((c) =>
      fc
        .tuple(fc.bigInt({ min: 0n, max: 99_999_999_999n }), fc.bigInt({ min: 0n, max: 10n ** BigInt(exponentOf(c)) - 1n }))
        .map(([whole, fraction]) => {
          const e = exponentOf(c);
          const literal = e === 0 ? String(whole) : `${whole}.${String(fraction).padStart(e, '0')}`;
          return { c, literal, expected: whole * 10n ** BigInt(e) + (e === 0 ? 0n : fraction) };
        }),
    );
    fc.assert(
      fc.property(literalArb, ({ c, literal, expected }) => {
        const parsed = parseAmount(literal, c);
        if (expected === 0n) return expect(parsed).toBe('not-positive');
        if (expected > BigInt(MAX_AMOUNT_MINOR)) return expect(parsed).toBe('format');
        expect(parsed).toEqual({ literal, amountMinor: Number(expected), currency: c });
      }),
    );
  });

  it('a JSON number with no more decimals than the exponent reads as the same amount', () => {
    fc.assert(
      fc.property(currency, fc.integer({ min: 1, max: 1e12 }), (c, minor) => {
        const e = currencyExponent(c) as number;
        const parsed = parseAmount(minor / 10 ** e, c);
        expect(parsed).toEqual({ literal: formatMinor(minor, c), amountMinor: minor, currency: c });
      }),
    );
  });

  it('never answers anything but an amount or a named problem, whatever the string', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), currency, (s, c) => {
        const parsed = parseAmount(s, c);
        if (typeof parsed === 'string') expect(['blank', 'not-positive', 'format']).toContain(parsed);
        else {
          expect(parsed.literal).toBe(s);
          expect(Number.isSafeInteger(parsed.amountMinor) && parsed.amountMinor > 0).toBe(true);
        }
      }),
    );
  });
});
