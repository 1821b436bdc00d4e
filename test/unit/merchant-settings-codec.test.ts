import { merchantView, settingsFromForm, settingsFromOptions, settingsOf } from '../../lambdas/protocol/merchant-settings';
import type { Merchant } from '../../lambdas/ports/merchants';

/** The portal's settings form and the CLI's options read through one codec into the same patch (undefined clears a setting). */
const LOCAL = { allowLoopback: true, httpsOnly: false };

describe.each([
  ['a name', { name: 'Acme' }, { name: 'Acme' }, { name: 'Acme' }],
  ['two-stage payments on', { dms: true }, { dms: 'on' }, { dms: true }],
  ['return parameters off', { return_params: false }, { 'return-params': 'off' }, { returnParams: false }],
  ['an auto capture delay', { auto_capture_delay_minutes: 30 }, { 'auto-capture-delay': '30' }, { autoCaptureDelayMinutes: 30 }],
  ['no auto capture', { auto_capture_delay_minutes: null }, { 'auto-capture-delay': 'off' }, { autoCaptureDelayMinutes: undefined }],
  ['a notification URL', { notification_url: 'https://shop.example/cb' }, { 'notification-url': 'https://shop.example/cb' }, { notificationUrl: 'https://shop.example/cb' }],
  ['no notification URL', { notification_url: null }, { 'notification-url': 'off' }, { notificationUrl: undefined }],
  ['methods', { methods: ['card'] }, { methods: 'card' }, { methods: ['card'] }],
  ['max declines', { max_declines: 5 }, { 'max-declines': '5' }, { maxDeclines: 5 }],
  ['frame ancestors', { frame_ancestors: ['https://shop.example'] }, { 'frame-ancestors': 'https://shop.example' }, { frameAncestors: ['https://shop.example'] }],
  ['a brand colour', { branding: { primary_color: '#0A7B83' } }, { 'brand-color': '#0A7B83' }, { branding: { primaryColor: '#0A7B83' } }],
  ['e-mail receipts on', { email_receipts: true }, { 'email-receipts': 'on' }, { emailReceipts: true }],
  ['e-mail receipts off', { email_receipts: false }, { 'email-receipts': 'off' }, { emailReceipts: false }],
] as const)('%s', (_, form, options, patch) => {
  it('reads the same from the portal and the CLI', () => {
    expect(settingsFromForm(form as Record<string, unknown>, LOCAL)).toEqual({ settings: patch });
    expect(settingsFromOptions(options)).toEqual({ settings: patch });
  });
});

describe('refusals', () => {
  it.each([
    [{ dms: 'yes' }, [{ path: 'dms', message: 'This value is not valid.' }]],
    [{ email_receipts: 'on' }, [{ path: 'email_receipts', message: 'This value is not valid.' }]],
    [{ email_receipts: null }, [{ path: 'email_receipts', message: 'This value is not valid.' }]],
    [{ name: null }, [{ path: 'name', message: 'This value is not valid.' }]],
    [{ methods: 'card' }, [{ path: 'methods', message: 'This value is not valid.' }]],
    [{ branding: 'blue' }, [{ path: 'branding', message: 'This value is not valid.' }]],
    [{ pre_routing: [{ methods: ['nope'] }] }, [{ path: 'pre_routing', message: 'This value is not valid.' }]],
    [{ max_declines: 0 }, [{ path: 'settings', message: 'max declines must be a whole number from 1 to 10' }]],
  ])('the form %j is refused field by field, then by the settings rule', (form, errors) => {
    expect(settingsFromForm(form, LOCAL)).toEqual({ errors });
  });

  it.each([
    [{ dms: 'yes' }, '--dms must be on or off, not "yes"'],
    [{ 'email-receipts': 'yes' }, '--email-receipts must be on or off, not "yes"'],
    [{ 'max-declines': 'off' }, '--max-declines must be a whole number, not "off"'],
    [{ 'max-declines': '0' }, 'max declines must be a whole number from 1 to 10'],
  ] as const)('the options %j are refused with the first problem', (options, problem) => {
    expect(settingsFromOptions(options)).toEqual({ problem });
  });

  it('reads pre-routing rules from the form', () => {
    expect(settingsFromForm({ pre_routing: [{ methods: ['card'], currency: 'EUR', min_amount_minor: 100 }] }, LOCAL)).toEqual({
      settings: { preRouting: [{ methods: ['card'], currency: 'EUR', minAmountMinor: 100 }] },
    });
  });
});

test('the views show the settings set, and the CLI adds the key and times', () => {
  const merchant: Merchant = { merchantKey: 'm-1', name: 'Acme', dms: false, returnParams: false, maxDeclines: 3, createdAt: 'c', updatedAt: 'u', frameAncestors: ['https://shop.example'] };
  expect(settingsOf(merchant)).toEqual({ name: 'Acme', dms: false, returnParams: false, maxDeclines: 3, frameAncestors: ['https://shop.example'] });
  expect(merchantView(merchant)).toEqual({ merchantKey: 'm-1', ...settingsOf(merchant), createdAt: 'c', updatedAt: 'u' });
});
