import { declineKind } from '../../lambdas/checkout-page/decline-kind';
import { SANDBOX_REASONS } from '../../lambdas/adapters/sandbox-acquirer/rules';

test.each([
  [SANDBOX_REASONS.declined, 'generic'],
  [SANDBOX_REASONS.threeDsFailed, 'authentication'],
  [SANDBOX_REASONS.redirectFailed, 'authentication'],
  [SANDBOX_REASONS.softDeclined, 'funds'],
  ['Declined by the acquirer.', 'generic'],
  ['Do not honor', 'generic'],
  ['Insufficient funds', 'funds'],
  ['Card expired', 'expired'],
  ['Expired card', 'expired'],
  ['3DS authentication failed', 'authentication'],
  ['Amount exceeds the limit', 'funds'],
  ['', 'generic'],
])('%j is a %s decline for the customer', (reason, kind) => {
  expect(declineKind(reason)).toBe(kind);
});
