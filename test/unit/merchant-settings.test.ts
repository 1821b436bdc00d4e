import { ManualClock } from '../../lambdas/ports/clock';
import type { Merchant, MerchantDirectory, MerchantSecrets, MerchantSettings } from '../../lambdas/ports/merchants';
import {
  MerchantAdminError,
  createMerchant,
  rotatePassword,
  settingsProblems,
  showMerchant,
  updateMerchantSettings,
} from '../../lambdas/use-cases/manage-merchants';

/** Merchant administration rules, on in-memory stand-ins for the table and the secret store. */
class MemoryDirectory implements MerchantDirectory {
  readonly items = new Map<string, Merchant>();
  async find(key: string) {
    return this.items.get(key);
  }
  async save(m: Merchant) {
    if (!this.items.has(m.merchantKey)) throw new Error('ConditionalCheckFailed');
    this.items.set(m.merchantKey, m);
  }
  async create(m: Merchant) {
    if (this.items.has(m.merchantKey)) return false;
    this.items.set(m.merchantKey, m);
    return true;
  }
  async list(limit = 100) {
    return [...this.items.values()].sort((a, b) => a.name.localeCompare(b.name)).slice(0, limit);
  }
  async markWebhookSecretRotated(key: string, at: Date) {
    const m = this.items.get(key);
    if (!m) throw new Error('ConditionalCheckFailed');
    this.items.set(key, { ...m, webhookSecretRotatedAt: at.toISOString() });
  }
}

class MemorySecrets implements MerchantSecrets {
  readonly passwords = new Map<string, string>();
  async passwordOf(key: string) {
    return this.passwords.get(key);
  }
  async put(key: string, password: string) {
    this.passwords.set(key, password);
  }
  readonly webhook = new Map<string, string[]>();
  async webhookSecretsOf(key: string) {
    return this.webhook.get(key) ?? [];
  }
  async putWebhookSecret(key: string, secret: string) {
    this.webhook.set(key, [secret, ...(this.webhook.get(key) ?? []).slice(0, 1)]);
  }
}

const setup = () => {
  const clock = new ManualClock('2030-01-01T00:00:00.000Z');
  return { merchants: new MemoryDirectory(), secrets: new MemorySecrets(), clock };
};

describe('settingsProblems', () => {
  it.each<[string, Partial<MerchantSettings>]>([
    ['a name', { name: 'Acme' }],
    ['DMS with an auto-capture delay', { dms: true, autoCaptureDelayMinutes: 0 }],
    ['the longest auto-capture delay (7 days)', { autoCaptureDelayMinutes: 10_080 }],
    ['an http notification URL (off AWS)', { notificationUrl: 'http://shop.example:8080/cb' }],
    ['card as the method', { methods: ['card'] }],
    ['1 to 10 declines', { maxDeclines: 10 }],
    ['a colour and an https logo', { branding: { primaryColor: '#2a3B5c', logoUrl: 'https://cdn.example/l.png' } }],
    ['https, wildcard and localhost frame ancestors', { frameAncestors: ['https://shop.example:8443', 'https://*.shop.example', 'http://localhost:3000'] }],
    ['clearing optional settings', { notificationUrl: undefined, methods: undefined, frameAncestors: undefined, autoCaptureDelayMinutes: undefined }],
  ])('accepts %s', (_name, patch) => {
    expect(settingsProblems(patch)).toEqual([]);
  });

  it('refuses a loopback notification URL unless the local runner allows its own receiver', () => {
    expect(settingsProblems({ notificationUrl: 'http://localhost:8080/cb' })).toEqual(['notification URL is refused: it points to this machine (localhost)']);
    expect(settingsProblems({ notificationUrl: 'http://localhost:8080/cb' }, { allowLoopback: true, httpsOnly: false })).toEqual([]);
    expect(settingsProblems({ notificationUrl: 'http://169.254.169.254/' }, { allowLoopback: true, httpsOnly: false })).toEqual([
      'notification URL is refused: it points to a private, loopback or reserved address',
    ]);
  });

  it.each<[string, Partial<MerchantSettings>, string]>([
    ['an empty name', { name: ' ' }, 'name must be 1-64 characters, without control characters'],
    ['a name with a newline', { name: 'Acme\nShop' }, 'name must be 1-64 characters, without control characters'],
    ['a 65-character name', { name: 'a'.repeat(65) }, 'name must be 1-64 characters, without control characters'],
    ['a negative delay', { autoCaptureDelayMinutes: -1 }, 'auto capture delay must be a whole number of minutes from 0 to 10080'],
    ['a fractional delay', { autoCaptureDelayMinutes: 1.5 }, 'auto capture delay must be a whole number of minutes from 0 to 10080'],
    ['a javascript: notification URL', { notificationUrl: 'javascript:alert(1)' }, 'notification URL must be an http(s) URL of at most 1024 characters'],
    ['no methods', { methods: [] }, 'methods must be a list without repeats of: card'],
    ['an unknown method', { methods: ['cash'] }, 'methods must be a list without repeats of: card (unknown: cash)'],
    ['0 declines', { maxDeclines: 0 }, 'max declines must be a whole number from 1 to 10'],
    ['11 declines', { maxDeclines: 11 }, 'max declines must be a whole number from 1 to 10'],
    ['a short colour', { branding: { primaryColor: '#abc' } }, 'brand color must be #RRGGBB'],
    ['a colour white text cannot be read on', { branding: { primaryColor: '#ffcc00' } }, 'brand color #ffcc00 is too light: white text on it has a contrast of 1.51:1, and the page needs at least 4.5:1 (try a darker shade)'],
    ['a colour just under the contrast the button needs', { branding: { primaryColor: '#808080' } }, 'brand color #808080 is too light: white text on it has a contrast of 3.95:1, and the page needs at least 4.5:1 (try a darker shade)'],
    ['an http logo', { branding: { logoUrl: 'http://cdn.example/l.png' } }, 'logo URL must be an https URL of at most 1024 characters'],
    ['a frame ancestor with a CSP directive', { frameAncestors: ["https://a.example 'unsafe-inline'"] }, "frame ancestors must be 1-10 origins like https://shop.example or https://*.shop.example (not an origin: https://a.example 'unsafe-inline')"],
    ['an http frame ancestor on the internet', { frameAncestors: ['http://shop.example'] }, 'frame ancestors must be 1-10 origins like https://shop.example or https://*.shop.example (not an origin: http://shop.example)'],
    ['a wildcard for everything', { frameAncestors: ['*'] }, 'frame ancestors must be 1-10 origins like https://shop.example or https://*.shop.example (not an origin: *)'],
  ])('refuses %s', (_name, patch, problem) => {
    expect(settingsProblems(patch)).toEqual([problem]);
  });

  it('reports every problem of a patch', () => {
    expect(settingsProblems({ maxDeclines: 0, branding: { primaryColor: 'red' } })).toHaveLength(2);
  });
});

describe('merchant administration', () => {
  it('creates a merchant with the default settings and stores the password only in the secret store', async () => {
    const deps = setup();
    const created = await createMerchant(deps, { name: 'Acme' });
    const stored = await showMerchant(deps, created.merchant_key);
    expect(stored).toEqual({ merchantKey: created.merchant_key, name: 'Acme', dms: false, returnParams: false, maxDeclines: 3, createdAt: '2030-01-01T00:00:00.000Z', updatedAt: '2030-01-01T00:00:00.000Z' });
    expect(JSON.stringify(stored)).not.toContain(created.password);
    expect(await deps.secrets.passwordOf(created.merchant_key)).toBe(created.password);
  });

  it('refuses invalid settings on create and on update, changing nothing', async () => {
    const deps = setup();
    await expect(createMerchant(deps, { name: '' })).rejects.toThrow(MerchantAdminError);
    const { merchant_key } = await createMerchant(deps, { name: 'Acme' });
    await expect(updateMerchantSettings(deps, merchant_key, { maxDeclines: 0 })).rejects.toThrow('max declines must be a whole number from 1 to 10');
    expect((await showMerchant(deps, merchant_key)).maxDeclines).toBe(3);
    expect(deps.merchants.items.size).toBe(1);
  });

  it('refuses a second merchant with the same key', async () => {
    const deps = setup();
    await createMerchant(deps, { name: 'Acme', merchantKey: 'acme' });
    await expect(createMerchant(deps, { name: 'Other', merchantKey: 'acme' })).rejects.toThrow('merchant acme already exists');
  });

  it('changes branding field by field, and drops it when both fields are cleared', async () => {
    const deps = setup();
    const { merchant_key } = await createMerchant(deps, { name: 'Acme', settings: { branding: { primaryColor: '#111111', logoUrl: 'https://cdn.example/a.png' } } });
    deps.clock.advance(1000);
    const newLogo = await updateMerchantSettings(deps, merchant_key, { branding: { logoUrl: 'https://cdn.example/b.png' } });
    expect(newLogo.branding).toEqual({ primaryColor: '#111111', logoUrl: 'https://cdn.example/b.png' });
    expect(newLogo.updatedAt).toBe('2030-01-01T00:00:01.000Z');
    const cleared = await updateMerchantSettings(deps, merchant_key, { branding: { primaryColor: undefined, logoUrl: undefined } });
    expect(cleared).not.toHaveProperty('branding');
  });

  it('clears an optional setting given as undefined', async () => {
    const deps = setup();
    const { merchant_key } = await createMerchant(deps, { name: 'Acme', settings: { notificationUrl: 'https://acme.example/cb' } });
    expect(await updateMerchantSettings(deps, merchant_key, { notificationUrl: undefined })).not.toHaveProperty('notificationUrl');
  });

  it('rotates the password of a known merchant only', async () => {
    const deps = setup();
    const created = await createMerchant(deps, { name: 'Acme' });
    const rotated = await rotatePassword(deps, created.merchant_key);
    expect(rotated.password).not.toBe(created.password);
    expect(await deps.secrets.passwordOf(created.merchant_key)).toBe(rotated.password);
    await expect(rotatePassword(deps, 'nobody')).rejects.toThrow('merchant nobody not found');
    expect(deps.secrets.passwords.has('nobody')).toBe(false);
  });
});
