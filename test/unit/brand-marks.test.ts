import { MARKED_BRANDS, brandMarks } from '../../lambdas/checkout-page/brand-marks';
import { cardBrandPatterns } from '../../lambdas/domain/card';

test('every brand the card rules accept has a mark on the page, and nothing else does', () => {
  expect([...MARKED_BRANDS].sort()).toEqual(cardBrandPatterns().map(([brand]) => brand).sort());
  const html = brandMarks('Cards accepted');
  for (const brand of MARKED_BRANDS) expect(html).toContain(`data-mark="${brand}"`);
});
