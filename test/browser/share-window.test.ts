/**
 * "Share with this network" in real Chromium (#63): the home computer's window (served at /ui by a
 * core in a namespace with a LAN) turns sharing on, adds a device and shows its QR code; the code
 * decodes (zbar) to the address shown beside it; a "phone" browser in a second namespace opens
 * that page in its own language and is then let through the proxy by its address. Screenshots of
 * the card and of the phone's page (English and Persian) go to .artifacts/; with
 * GATEHOP_DOC_SCREENSHOTS=1, the README's go to docs/screenshots/ too.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumIn, collectErrors, hasChromium, launchChromium, newContext } from '../helpers/browser.js';
import { isRoot, lanPair, type NetNs, waitForLine } from '../helpers/netns.js';

const ROOT = resolve(__dirname, '../..');
const BIN = join(ROOT, 'bin/gatehop.js');
const ART = join(ROOT, '.artifacts/screenshots');
const DOCS = join(ROOT, 'docs/screenshots');
const PASSWORD = 'correct horse battery';
const hasZbar = spawnSync('sh', ['-c', 'command -v zbarimg']).status === 0;

describe.skipIf(!isRoot || !hasChromium)('sharing with a phone, in the window and on the phone (#63)', () => {
  let home: NetNs;
  let phone: NetNs;
  let dir = '';
  let dashboard = '';
  let lanDashboard = '';
  let homeBrowser: Browser;
  let phoneBrowser: Browser;
  let pageUrl = '';
  const lan = `10.${60 + (process.pid % 30)}.${Math.floor(Math.random() * 250)}`;

  beforeAll(async () => {
    ({ a: home, b: phone } = lanPair(lan));
    dir = mkdtempSync(join(tmpdir(), 'gh-share-window-'));
    mkdirSync(ART, { recursive: true });
    writeFileSync(join(dir, 'hello.txt'), 'hello from the LAN\n');
    const site = phone.spawn(['python3', '-u', '-m', 'http.server', '8080', '--bind', `${lan}.2`, '--directory', dir]);
    await waitForLine(site, /Serving HTTP/, 10_000);
    // The dashboard on the LAN too, behind a password (no token in the link there).
    const set = spawnSync(process.execPath, [BIN, 'dashboard-password', '--data-dir', join(dir, 'data')], {
      input: `${PASSWORD}\n`,
      encoding: 'utf8',
    });
    expect(set.status, set.stderr).toBe(0);
    const core = home.spawn([
      process.execPath,
      BIN,
      '--egress',
      'direct',
      '--admin',
      '0.0.0.0:9090',
      '--data-dir',
      join(dir, 'data'),
      '--log-file',
      'off',
    ]);
    lanDashboard = (await waitForLine(core, /^dashboard from your network: /, 30_000)).split(': ')[1]!.split(' ')[0]!;
    const token = readFileSync(join(dir, 'data', 'admin-token'), 'utf8').trim();
    dashboard = `http://127.0.0.1:9090/ui/#token=${token}`;
    homeBrowser = await launchChromium(chromiumIn(home.name, dir));
    phoneBrowser = await launchChromium(chromiumIn(phone.name, dir));
  }, 90_000);

  afterAll(async () => {
    await homeBrowser?.close();
    await phoneBrowser?.close();
    home?.close();
    phone?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('turns sharing on, adds a device and shows a QR code that decodes to the address beside it', async () => {
    const ctx = await newContext(homeBrowser, { height: 1400 });
    const page = await ctx.newPage();
    const errors = collectErrors(page);
    await page.goto(dashboard);
    await page.getByRole('tab', { name: 'Settings' }).click();
    const card = page.getByTestId('share');
    await expect.poll(() => card.getByTestId('share-state').textContent()).toContain('Off');
    // The switch follows the core's answer (not the click): click, then wait for what the core says.
    await card.getByTestId('share-switch').click();
    await expect
      .poll(() => card.getByTestId('share-state').textContent(), { timeout: 10_000 })
      .toContain(`${lan}.1, port 1081`);
    await card.getByLabel('New device').fill("Mum's phone");
    await card.getByRole('button', { name: 'Add' }).click();
    const url = card.getByTestId('share-url');
    await expect.poll(() => url.inputValue(), { timeout: 10_000 }).toMatch(/^http:\/\//);
    pageUrl = await url.inputValue();
    expect(pageUrl).toMatch(new RegExp(`^http://${lan.replace(/\./g, '\\.')}\\.1:1081/d/[A-Za-z0-9_-]{24}$`));
    expect(await card.getByTestId('share-device').count()).toBe(1);
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: join(ART, 'share-card-en.png') });
    if (hasZbar) {
      const png = join(dir, 'qr.png');
      await card.getByRole('img', { name: 'QR code of the device’s page' }).screenshot({ path: png });
      const z = spawnSync('zbarimg', ['-q', '--raw', png], { encoding: 'utf8' });
      expect(z.status, z.stderr).toBe(0);
      expect(z.stdout.trim()).toBe(pageUrl);
    }
    expect(errors).toEqual([]);
    await ctx.close();
  });

  it('shows the card in Persian, right to left', async () => {
    const ctx = await newContext(homeBrowser, { height: 1400, locale: 'fa-IR' });
    const page = await ctx.newPage();
    await page.goto(dashboard);
    await page.getByRole('tab', { name: 'تنظیمات' }).click();
    const card = page.getByTestId('share');
    await expect.poll(() => card.getByTestId('share-state').textContent()).toContain('روشن');
    await card.getByRole('button', { name: 'نمایش کد' }).click();
    await expect.poll(() => card.getByTestId('share-url').inputValue()).toBe(pageUrl);
    expect(await page.locator('html').getAttribute('dir')).toBe('rtl');
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: join(ART, 'share-card-fa.png') });
    await ctx.close();
  });

  it('asks for the dashboard password on the LAN address, not for a token in the link; a wrong one is refused', async () => {
    expect(lanDashboard).toBe(`http://${lan}.1:9090/ui/`);
    const ctx = await newContext(phoneBrowser);
    const page = await ctx.newPage();
    await page.goto(lanDashboard);
    const field = page.getByLabel('Dashboard password');
    await field.fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 15_000 }).toContain('Wrong password');
    await field.fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signed in: the window itself, its tabs and the core's status.
    await expect.poll(() => page.getByRole('tab', { name: 'Settings' }).count(), { timeout: 15_000 }).toBe(1);
    await page.getByRole('tab', { name: 'Settings' }).click();
    await expect.poll(() => page.getByTestId('share-state').textContent()).toContain('port 1081');
    await ctx.close();
  });

  it("opens the device's page on the phone in its language; the phone is then let through by its address", async () => {
    for (const locale of ['en-US', 'fa-IR']) {
      const ctx = await newContext(phoneBrowser, { locale, width: 390, height: 1500 });
      const page = await ctx.newPage();
      await page.goto(pageUrl);
      expect(await page.locator('#pac').textContent()).toBe(`${pageUrl}/proxy.pac`);
      expect(await page.locator('html').getAttribute('lang')).toBe(locale.slice(0, 2) === 'fa' ? 'fa' : 'en');
      await page.screenshot({ path: join(ART, `share-phone-${locale.slice(0, 2)}.png`), fullPage: true });
      await ctx.close();
    }
    const through = spawnSync(
      'ip',
      [
        'netns',
        'exec',
        phone.name,
        'curl',
        '-sS',
        '--max-time',
        '10',
        '-x',
        `http://${lan}.1:1081`,
        `http://${lan}.2:8080/hello.txt`,
      ],
      { encoding: 'utf8' },
    );
    expect(through.stdout, through.stderr).toBe('hello from the LAN\n');
    if (process.env.GATEHOP_DOC_SCREENSHOTS === '1') {
      mkdirSync(DOCS, { recursive: true });
      for (const f of ['share-card-en.png', 'share-card-fa.png', 'share-phone-en.png', 'share-phone-fa.png'])
        copyFileSync(join(ART, f), join(DOCS, f));
    }
  });
});
