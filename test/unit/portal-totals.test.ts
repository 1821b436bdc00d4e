import { totalsByCurrency } from '../../lambdas/admin-portal/client/dom';

test('amounts add up per currency, exactly, whatever their count', () => {
  expect(totalsByCurrency([])).toBe('');
  expect(totalsByCurrency([{ amount: '0.10', currency: 'USD' }, { amount: '0.20', currency: 'USD' }])).toBe('0.30 USD');
  expect(totalsByCurrency([{ amount: '1500', currency: 'JPY' }, { amount: '10.00', currency: 'USD' }, { amount: '7', currency: 'JPY' }])).toBe('1507 JPY · 10.00 USD');
  expect(totalsByCurrency([{ amount: '10.250', currency: 'KWD' }, { amount: '0.750', currency: 'KWD' }])).toBe('11.000 KWD');
  // Many large amounts: no floating-point drift.
  expect(totalsByCurrency(Array.from({ length: 1000 }, () => ({ amount: '999999999.99', currency: 'EUR' })))).toBe('999999999990.00 EUR');
});
