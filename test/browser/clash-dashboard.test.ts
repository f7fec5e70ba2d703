/**
 * Real Clash dashboards switching Gatehop's routing mode with their own controls (#33), in real
 * Chromium, served by Gatehop's externalUi as mihomo's external-ui serves them.
 *
 * The builds are unmodified copies kept beside the project, never in it (a copy in this repository
 * would be someone else's code): ../shared/clash-dashboards/{yacd,metacubexd,zashboard}, there in
 * CI too, used by default; GATEHOP_CLASH_DASHBOARDS (path-separated) names others:
 *
 *   yacd        haishanh/yacd, branch gh-pages
 *   metacubexd  MetaCubeX/metacubexd, branch gh-pages (or its release's compressed-dist)
 *   zashboard   Zephyruso/zashboard, branch gh-pages-no-fonts (or its release's dist)
 *
 *   GATEHOP_CLASH_DASHBOARDS=/tmp/yacd:/tmp/metacubexd:/tmp/zashboard \
 *     npx vitest run test/browser/clash-dashboard.test.ts
 *
 * Last run 2026-12-04 against ../shared's yacd gh-pages 09eb938 (0.3.8), metacubexd gh-pages
 * v1.271.0 and zashboard gh-pages-no-fonts 1b7eab2: each switches the mode, lists the rules,
 * refreshes a rule set with its own button and closes a live connection from its Connections page.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig, startApp, type ConfigInput, type RunningApp } from '../../core/app/index.js';
import { silentLogger } from '../../core/common/index.js';
import { collectErrors, hasChromium, launchChromium, newContext } from '../helpers/browser.js';
import { until } from '../helpers/fds.js';
import { startEchoServer } from '../helpers/servers.js';
import { socksConnect } from '../helpers/socks-client.js';

const TOKEN = 'clash-dashboard-secret-0123456789';
/**
 * Console errors that are not Gatehop failing to answer: the dashboards' own internet lookups
 * (IP, fonts, latency, update checks) and their guess of a core at :9090.
 */
const NOT_GATEHOPS = /ERR_NAME_NOT_RESOLVED|Content Security Policy|:9090|network error|Failed to fetch|401/;
type Mode = 'rule' | 'global' | 'direct';
const LABEL: Record<Mode, string> = { rule: 'Rule', global: 'Global', direct: 'Direct' };

/** How each dashboard is opened, told the controller, made to switch the mode, and used on its Rules and Connections pages. */
interface Driver {
  kind: string;
  open(page: Page, port: number): Promise<unknown>;
  switchTo(page: Page, mode: Mode): Promise<void>;
  /** Opens the Rules page (the rules listed). */
  rules(page: Page): Promise<void>;
  /** Refreshes the rule set `name` with the dashboard's own button. */
  refreshRuleSet(page: Page, name: string): Promise<void>;
  /** Opens the Connections page. */
  connections(page: Page): Promise<void>;
  /** Closes the connection shown with `host` (its row's close, or "close all" where that is what the dashboard has). */
  closeConnection(page: Page, host: string): Promise<void>;
}

/**
 * Goes to a route of a single-page dashboard once it has connected (its setup page moves on by
 * itself; a route taken before that is lost): the page is loaded again at that route, and the
 * dashboard reads the core it was told of from its own storage.
 */
async function route(page: Page, hash: string): Promise<void> {
  await page.waitForURL((u) => u.hash !== '' && !u.hash.includes('setup'));
  const u = new URL(page.url());
  await page.goto(`${u.origin}${u.pathname}${hash}`);
}

/**
 * metacubexd's and zashboard's Rules and Connections pages, which work alike: routes `#/rules` and
 * `#/connections`, a providers tab (`providersTab`) whose row for a set ends with its update
 * button, and a close button first in each connection's table row.
 */
function hashRoutedPages(
  providersTab: (page: Page) => Locator,
): Pick<Driver, 'rules' | 'refreshRuleSet' | 'connections' | 'closeConnection'> {
  return {
    rules: (page) => route(page, '#/rules'),
    refreshRuleSet: async (page, name) => {
      await providersTab(page).click();
      const row = page
        .locator('div', { hasText: name })
        .filter({ has: page.locator('button') })
        .last();
      await row.locator('button').last().click();
    },
    connections: (page) => route(page, '#/connections'),
    closeConnection: async (page, host) => {
      await page.locator('tr', { hasText: host }).locator('button').first().click();
    },
  };
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
    rules: async (page) => {
      await page.getByRole('link', { name: 'Rules' }).click();
    },
    refreshRuleSet: async (page) => {
      await page.getByRole('button', { name: 'Refresh', exact: true }).first().click();
    },
    connections: async (page) => {
      await page.getByRole('link', { name: 'Conns' }).click();
    },
    // yacd closes connections all at once (a confirmation first).
    closeConnection: async (page) => {
      // A floating button whose actions open on hover; the label is a tooltip.
      await page.locator('.rtf--mb').hover();
      await page.getByRole('button', { name: 'Close All Connections', includeHidden: true }).click();
      await page.getByText("I'm sure").click();
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
    ...hashRoutedPages((page) => page.getByRole('button', { name: /^Rule Providers/ })),
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
    ...hashRoutedPages((page) => page.getByText(/^Rule provider/)),
  },
};

/** A core on the direct egress serving the dashboard build `dir` as its external UI, with `fromFile`'s routing. */
function startDashboardCore(fromFile: ConfigInput, dir: string, dataDir: string): Promise<RunningApp> {
  return startApp(
    buildConfig(fromFile, {
      egress: 'direct',
      listen: '127.0.0.1:0',
      admin: '127.0.0.1:0',
      adminToken: TOKEN,
      externalUi: dir,
      logFile: 'off',
      dataDir,
    }),
    silentLogger(),
  );
}

function driverFor(dir: string): Driver | null {
  if (existsSync(join(dir, 'yacd-64.png'))) return DRIVERS.yacd!;
  if (existsSync(join(dir, '_nuxt'))) return DRIVERS.metacubexd!;
  const html = existsSync(join(dir, 'index.html')) ? readFileSync(join(dir, 'index.html'), 'utf8') : '';
  if (/zashboard/i.test(html) || readdirSync(dir).includes('THIRD_PARTY_NOTICES.md')) return DRIVERS.zashboard!;
  return null;
}

/** The unmodified builds the project keeps beside it for tests (../shared/clash-dashboards, CI too). */
const SHARED = resolve(import.meta.dirname, '../../../shared/clash-dashboards');
const DEFAULT_BUILDS = ['yacd', 'metacubexd', 'zashboard'].map((d) => join(SHARED, d)).join(delimiter);

const builds = (process.env.GATEHOP_CLASH_DASHBOARDS ?? DEFAULT_BUILDS)
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
          app = await startDashboardCore(
            { mode: 'rule', rules: ['DOMAIN-SUFFIX,example,DIRECT', 'GEOIP,LAN,DIRECT,no-resolve', 'MATCH,TUNNEL'] },
            dir,
            mkdtempSync(join(tmpdir(), 'gh-clash-dash-')),
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
          const ours = errors.filter((e) => !NOT_GATEHOPS.test(e.text));
          // A request the page itself cancelled (net::ERR_ABORTED: metacubexd drops its /api/control/info
          // probe when it moves on) is not one Gatehop failed to answer.
          // Nor is one Chromium dropped because the host's interfaces changed (see collectErrors).
          const ourFailures = failed.filter(
            (f) =>
              f.includes('127.0.0.1') && !f.endsWith('net::ERR_ABORTED') && !f.endsWith('net::ERR_NETWORK_CHANGED'),
          );
          expect({ ours, failed: ourFailures }).toEqual({ ours: [], failed: [] });
        } finally {
          await ctx.close();
          await app?.stop();
        }
      },
      90_000,
    );

    it.each(builds)(
      '$driver.kind: the Rules page lists the table and refreshes a rule set; the Connections page shows a flow and closes it (#45) ($dir)',
      async ({ dir, driver }) => {
        const dataDir = mkdtempSync(join(tmpdir(), 'gh-clash-dash-'));
        mkdirSync(join(dataDir, 'rule-sets'), { recursive: true });
        const setFile = join(dataDir, 'rule-sets', 'ads.txt');
        writeFileSync(setFile, '+.ads.example\n');
        const echo = await startEchoServer();
        let app: RunningApp | null = null;
        const ctx = await newContext(browser);
        try {
          app = await startDashboardCore(
            {
              mode: 'rule',
              rules: ['RULE-SET,ads,REJECT', 'DOMAIN,localhost,DIRECT', 'GEOIP,LAN,DIRECT,no-resolve', 'MATCH,TUNNEL'],
              ruleProviders: { ads: { type: 'file', behavior: 'domain', format: 'text', path: 'ads.txt' } },
            },
            dir,
            dataDir,
          );
          const running = app;
          const page = await ctx.newPage();
          const errors = collectErrors(page);
          await driver.open(page, running.listening.admin!.port);
          // Rules: the table as Clash shows it, and a rule set refreshed with the dashboard's button.
          await driver.rules(page);
          await page
            .getByText(/localhost/)
            .locator('visible=true')
            .first()
            .waitFor();
          expect(running.routing.status().ruleSets[0]).toMatchObject({ name: 'ads', entries: 1 });
          writeFileSync(setFile, '+.ads.example\n+.tracker.example\n');
          await driver.refreshRuleSet(page, 'ads');
          await until(
            () => (running.routing.status().ruleSets[0]!.entries === 2 ? true : undefined),
            10_000,
            'the rule set read again',
          );
          // Connections: a live flow with its rule, closed from the page.
          const flow = await socksConnect(running.listening.proxy.port, 'localhost', echo.port);
          expect(flow.reply[1]).toBe(0x00);
          flow.client.write(Buffer.from('hi'));
          await flow.client.read(2);
          // The client socket is half-open: the proxy's FIN arrives as 'end'.
          const closed = new Promise<void>((r) => {
            flow.client.socket.once('end', () => r());
            flow.client.socket.once('close', () => r());
          });
          await driver.connections(page);
          const host = `localhost:${echo.port}`;
          await page.getByText(host).first().waitFor();
          // The rule that placed it, as Clash names it.
          expect(await page.locator('body').innerText()).toMatch(/Domain/);
          await driver.closeConnection(page, host);
          await closed;
          const ours = errors.filter((e) => !NOT_GATEHOPS.test(e.text));
          expect(ours).toEqual([]);
        } finally {
          await ctx.close();
          await app?.stop();
          await echo.close();
        }
      },
      90_000,
    );
  },
);
