import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expectedShots, type ShotText } from '../../scripts/docs-screenshots-plan';

/**
 * docs/screenshots/ is current: exactly the planned files, each a PNG, and manifest.json (written
 * by `npm run docs:screenshots` from what each page showed) says the pages showed the texts the
 * page has now: a changed text, language or list of shots fails here until the screenshots are
 * taken again. Pixels are not compared.
 */
const DIR = resolve(__dirname, '../../docs/screenshots');
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('docs/screenshots', () => {
  const manifest = JSON.parse(readFileSync(join(DIR, 'manifest.json'), 'utf8')) as ShotText[];

  it('holds exactly the planned screenshots and the manifest', () => {
    expect(readdirSync(DIR).sort()).toEqual([...expectedShots().map((s) => s.file), 'manifest.json'].sort());
  });

  it.each(expectedShots().map((s) => [s.file, s] as const))('%s is a PNG and showed the current texts', (file, shot) => {
    const bytes = readFileSync(join(DIR, file));
    expect(bytes.subarray(0, 8).equals(PNG)).toBe(true);
    expect(bytes.length).toBeGreaterThan(10_000);
    expect(manifest.find((m) => m.file === file)).toEqual(shot);
  });

  it('shows the page in three languages on a desktop, Arabic and Russian on a phone, each scheme drawn as asked, and the portal on a phone', () => {
    expect(manifest.filter((m) => m.device === 'desktop' && m.scheme === 'light').map((m) => [m.lang, m.dir])).toEqual([['en', 'ltr'], ['es', 'ltr'], ['ar', 'rtl']]);
    expect(manifest.filter((m) => m.device === 'phone' && m.file.startsWith('checkout-')).map((m) => [m.lang, m.dir, m.scheme])).toEqual([
      ['ar', 'rtl', 'light'],
      ['ar', 'rtl', 'dark'],
      ['ru', 'ltr', 'light'],
      ['ru', 'ltr', 'dark'],
    ]);
    // The scheme recorded is the one read off the page's background, so a dark shot is dark.
    expect(manifest.filter((m) => m.file.includes('-dark')).every((m) => m.scheme === 'dark')).toBe(true);
    expect(manifest.filter((m) => m.file.startsWith('portal-')).map((m) => [m.device, m.scheme])).toEqual([
      ['phone', 'light'],
      ['phone', 'dark'],
    ]);
    expect(existsSync(join(DIR, 'portal-payments-phone.png'))).toBe(true);
  });
});
