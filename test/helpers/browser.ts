/**
 * Debian's Chromium driven by playwright-core (no browser download). The flags keep it off the
 * network: this machine's closed network refuses Chromium's background connections.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** `executablePath`: another way to start it (a script that runs it in a test's namespace). */
export function launchChromium(executablePath = CHROMIUM): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-default-apps',
    ],
  });
}

/** Console errors and page errors of a page, each with the time it came. */
export function collectErrors(page: Page): Array<{ at: number; text: string }> {
  const out: Array<{ at: number; text: string }> = [];
  page.on('console', (m) => {
    // ERR_NETWORK_CHANGED is Chromium dropping in-flight requests because the host's interfaces
    // changed: the rig tests running beside a browser test add and remove veths (CI met it once,
    // on a poll the page repeated). It says nothing about the page.
    if (m.type() === 'error' && !m.text().includes('net::ERR_NETWORK_CHANGED')) {
      out.push({ at: Date.now(), text: m.text() });
    }
  });
  page.on('pageerror', (e) => out.push({ at: Date.now(), text: String(e) }));
  return out;
}

export async function newContext(
  browser: Browser,
  opts: { dark?: boolean; locale?: string; width?: number; height?: number } = {},
): Promise<BrowserContext> {
  return browser.newContext({
    viewport: { width: opts.width ?? 1100, height: opts.height ?? 720 },
    colorScheme: opts.dark ? 'dark' : 'light',
    locale: opts.locale ?? 'en-US',
  });
}

/**
 * A script that starts Debian's Chromium inside network namespace `ns` (Playwright talks to it over
 * a pipe, which `ip netns exec` passes through): a browser on a test's LAN, a phone's or a home's.
 */
export function chromiumIn(ns: string, dir: string): string {
  const path = join(dir, `chromium-in-${ns}.sh`);
  writeFileSync(path, `#!/bin/sh\nexec ip netns exec ${ns} ${CHROMIUM} "$@"\n`, { mode: 0o755 });
  return path;
}
