/**
 * A profile per network in real Chromium (#64): the window (served at /ui by a real core in a
 * namespace of the test's own) names the network this computer is on; after the test moves the
 * default route to the "café" interface, the card names the café's network, a profile saved there
 * is in force at once and named by what it changes; back on the "home" interface the card says no
 * profile applies and lists the café's by its network. Then the same in Persian, right to left.
 * Screenshots go to .artifacts/; with GATEHOP_DOC_SCREENSHOTS=1, the README's to docs/screenshots/.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumIn, collectErrors, hasChromium, launchChromium, newContext } from '../helpers/browser.js';
import { coreInNamespace, isRoot, NetNs, twoWaysOut } from '../helpers/netns.js';

const ROOT = resolve(__dirname, '../..');
const ART = join(ROOT, '.artifacts/screenshots');
const DOCS = join(ROOT, 'docs/screenshots');

describe.skipIf(!isRoot || !hasChromium)('a profile per network, in the window (#64)', () => {
  let ns: NetNs;
  let dir = '';
  let dashboard = '';
  let browser: Browser;
  const net = `10.${120 + (process.pid % 60)}`;
  let wayOut: (iface: 'home0' | 'cafe0') => void;

  beforeAll(async () => {
    ns = new NetNs();
    wayOut = twoWaysOut(ns, { home0: `${net}.1`, cafe0: `${net}.2` });
    wayOut('home0');
    dir = mkdtempSync(join(tmpdir(), 'gh-profiles-window-'));
    mkdirSync(ART, { recursive: true });
    await coreInNamespace(ns, join(dir, 'data'), { admin: true });
    const token = readFileSync(join(dir, 'data', 'admin-token'), 'utf8').trim();
    dashboard = `http://127.0.0.1:9090/ui/#token=${token}`;
    browser = await launchChromium(chromiumIn(ns.name, dir));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    ns?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('names the network, saves a profile at the café that is in force at once, and says at home that none applies', async () => {
    const ctx = await newContext(browser, { height: 1600 });
    const page = await ctx.newPage();
    const errors = collectErrors(page);
    await page.goto(dashboard);
    await page.getByRole('tab', { name: 'Settings' }).click();
    const card = page.getByTestId('profiles');
    const here = card.getByTestId('profiles-here');
    await expect
      .poll(() => here.textContent())
      .toBe(`This network: home0 ${net}.1.x · No profile for this network: your own settings apply.`);

    wayOut('cafe0');
    await expect.poll(() => here.textContent(), { timeout: 15_000 }).toContain(`cafe0 ${net}.2.x`);
    await card.getByLabel('Profile name').fill('Café');
    await card.getByLabel('What goes through the VPN').selectOption('global');
    await card.getByLabel('HTTPS only').selectOption('on');
    await card.getByLabel('Protocol tried first').selectOption('sevpn');
    await card.getByRole('button', { name: 'Save for this network' }).click();
    await expect.poll(() => here.textContent(), { timeout: 10_000 }).toContain('In force here: “Café”.');
    expect(await card.getByTestId('profile').textContent()).toMatch(
      /Café · this network.*through the VPN: Everything, HTTPS only on, SE-VPN first/,
    );
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: join(ART, 'profiles-en.png') });

    wayOut('home0');
    await expect.poll(() => here.textContent(), { timeout: 15_000 }).toContain('No profile for this network');
    expect(await card.getByTestId('profile').textContent()).toContain(`cafe0 ${net}.2.x`);
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('shows the card in Persian, right to left, with the profile in force at the café', async () => {
    wayOut('cafe0');
    const ctx = await newContext(browser, { height: 1600, locale: 'fa-IR' });
    const page = await ctx.newPage();
    const errors = collectErrors(page);
    await page.goto(dashboard);
    await page.getByRole('tab', { name: 'تنظیمات' }).click();
    const card = page.getByTestId('profiles');
    await expect
      .poll(() => card.getByTestId('profiles-here').textContent(), { timeout: 15_000 })
      .toContain('اینجا فعال است: «Café»');
    expect(await card.getByTestId('profile').textContent()).toContain('فقط HTTPS روشن');
    expect(await page.locator('html').getAttribute('dir')).toBe('rtl');
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: join(ART, 'profiles-fa.png') });
    expect(errors).toEqual([]);
    await ctx.close();
    if (process.env.GATEHOP_DOC_SCREENSHOTS === '1') {
      mkdirSync(DOCS, { recursive: true });
      for (const f of ['profiles-en.png', 'profiles-fa.png']) copyFileSync(join(ART, f), join(DOCS, f));
    }
  });
});
