/**
 * Real Clash dashboards switching Gatehop's routing mode with their own controls (#33), in real
 * Chromium, served by Gatehop's externalUi as mihomo's external-ui serves them.
 *
 * No dashboard build reaches this machine's CI: none is published on npm (the one registry CI
 * reaches), and a copy in this repository would be someone else's code. So the test runs where
 * GATEHOP_CLASH_DASHBOARDS names unpacked builds (path-separated), and is skipped otherwise:
 *
 *   yacd        haishanh/yacd, branch gh-pages
 *   metacubexd  MetaCubeX/metacubexd, branch gh-pages (or its release's compressed-dist)
 *   zashboard   Zephyruso/zashboard, branch gh-pages-no-fonts (or its release's dist)
 *
 *   GATEHOP_CLASH_DASHBOARDS=/tmp/yacd:/tmp/metacubexd:/tmp/zashboard \
 *     npx vitest run test/browser/clash-dashboard.test.ts
 *
 * Last run 2026-12-03 against yacd gh-pages 09eb938 (0.3.8), metacubexd gh-pages v1.271.0 and
 * zashboard gh-pages-no-fonts 6a7323a: all three pass.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig, startApp, type RunningApp } from '../../core/app/index.js';
import { silentLogger } from '../../core/common/index.js';
import { collectErrors, hasChromium, launchChromium, newContext } from '../helpers/browser.js';
import { until } from '../helpers/fds.js';

const TOKEN = 'clash-dashboard-secret-0123456789';
type Mode = 'rule' | 'global' | 'direct';
const LABEL: Record<Mode, string> = { rule: 'Rule', global: 'Global', direct: 'Direct' };

/** How each dashboard is opened, told the controller, and made to switch the mode. */
interface Driver {
  kind: string;
  open(page: Page, port: number): Promise<unknown>;
  switchTo(page: Page, mode: Mode): Promise<void>;
}

const DRIVERS: Record<string, Driver> = {
  yacd: {
    kind: 'yacd',
    // yacd takes the controller from the query (its README); the Config page has a Mode select.
    open: (page, port) =>
      page.goto(`http://127.0.0.1:${port}/ui/external/?hostname=127.0.0.1&port=${port}&secret=${TOKEN}#/configs`),
    switchTo: async (page, mode) => {
      const select = page.locator('select').filter({ has: page.locator('option[value="Rule"]') });
      await select.selectOption(LABEL[mode]);
    },
  },
  metacubexd: {
    kind: 'metacubexd',
    // metacubexd's setup page connects from its hash query; the sidebar's Running Mode menu switches.
    open: (page, port) =>
      page.goto(`http://127.0.0.1:${port}/ui/external/#/setup?hostname=127.0.0.1&port=${port}&secret=${TOKEN}`),
    switchTo: async (page, mode) => {
      await page.getByTitle(/^Running Mode: /).click();
      await page.getByText(LABEL[mode], { exact: true }).locator('visible=true').first().click();
    },
  },
  zashboard: {
    kind: 'zashboard',
    // zashboard reads the backend from the query; the Proxies page's mode combobox switches.
    open: (page, port) =>
      page.goto(`http://127.0.0.1:${port}/ui/external/?hostname=127.0.0.1&port=${port}&secret=${TOKEN}`),
    switchTo: async (page, mode) => {
      await page
        .getByRole('combobox')
        .filter({ hasText: /^(Rule|Global|Direct)$/ })
        .click();
      await page.getByText(LABEL[mode], { exact: true }).locator('visible=true').first().click();
    },
  },
};

function driverFor(dir: string): Driver | null {
  if (existsSync(join(dir, 'yacd-64.png'))) return DRIVERS.yacd!;
  if (existsSync(join(dir, '_nuxt'))) return DRIVERS.metacubexd!;
  const html = existsSync(join(dir, 'index.html')) ? readFileSync(join(dir, 'index.html'), 'utf8') : '';
  if (/zashboard/i.test(html) || readdirSync(dir).includes('THIRD_PARTY_NOTICES.md')) return DRIVERS.zashboard!;
  return null;
}

const builds = (process.env.GATEHOP_CLASH_DASHBOARDS ?? '')
  .split(delimiter)
  .filter((d) => d && existsSync(join(d, 'index.html')))
  .map((dir) => ({ dir, driver: driverFor(dir) }))
  .filter((b): b is { dir: string; driver: Driver } => b.driver !== null);

describe.skipIf(!hasChromium || builds.length === 0)(
  'real Clash dashboards over Gatehop (GATEHOP_CLASH_DASHBOARDS)',
  () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it.each(builds)(
      '$driver.kind switches the routing mode with its own control ($dir)',
      async ({ dir, driver }) => {
        let app: RunningApp | null = null;
        const ctx = await newContext(browser);
        try {
          app = await startApp(
            buildConfig(
              { mode: 'rule', rules: ['DOMAIN-SUFFIX,example,DIRECT', 'GEOIP,LAN,DIRECT,no-resolve', 'MATCH,TUNNEL'] },
              {
                egress: 'direct',
                listen: '127.0.0.1:0',
                admin: '127.0.0.1:0',
                adminToken: TOKEN,
                externalUi: dir,
                logFile: 'off',
                dataDir: mkdtempSync(join(tmpdir(), 'gh-clash-dash-')),
              },
            ),
            silentLogger(),
          );
          const running = app;
          const page = await ctx.newPage();
          const errors = collectErrors(page);
          const failed: string[] = [];
          page.on('requestfailed', (r) => failed.push(`${r.method()} ${r.url()} ${r.failure()?.errorText}`));
          await driver.open(page, running.listening.admin!.port);
          for (const mode of ['global', 'direct', 'rule'] as const) {
            await driver.switchTo(page, mode);
            await until(() => (running.routing.status().mode === mode ? true : undefined), 10_000, `${mode} mode`);
          }
          // What may fail on a closed machine: the dashboards' own internet lookups (IP, fonts, latency,
          // update checks) and their guess of a core at :9090. Nothing they ask of Gatehop may fail.
          const ours = errors.filter(
            (e) =>
              !/ERR_NAME_NOT_RESOLVED|Content Security Policy|:9090|network error|Failed to fetch|401/.test(e.text),
          );
          expect({ ours, failed: failed.filter((f) => f.includes('127.0.0.1')) }).toEqual({ ours: [], failed: [] });
        } finally {
          await ctx.close();
          await app?.stop();
        }
      },
      90_000,
    );
  },
);
