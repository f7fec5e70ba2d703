import { writeFileSync } from 'node:fs';
import pino from 'pino';
import {
  buildConfig,
  startApp,
  type ConfigInput,
  type GatehopConfig,
  type RunningApp,
  type StartExtras,
} from '../../core/app/index.js';
import type { Logger } from '../../core/common/index.js';
import { eventually, until } from './fds.js';
import type { Rig } from '../rig/rig.js';
import { HONESTY_BODY, HONESTY_PAGE } from '../rig/services/fixed.mjs';

/**
 * The config of a core that runs in the test process over a rig: its API look-alike as the node
 * list, any free port, no admin API, the rig's URL test and DNS health name; `over` wins, section
 * by section for groups and switching.
 */
export function rigAppConfig(rig: Rig, dataDir: string, over: ConfigInput = {}): GatehopConfig {
  return buildConfig({}, rigAppInput(rig, dataDir, over));
}

/** rigAppConfig's flags, for a test that also passes them to startApp as layers (saved settings on top). */
export function rigAppInput(rig: Rig, dataDir: string, over: ConfigInput = {}): ConfigInput {
  return {
    egress: 'vpngate',
    api: [rig.state.apiUrl],
    listen: '127.0.0.1:0',
    admin: 'off',
    dataDir,
    logFile: 'off',
    // The rig's "internet" is in 10.0.0.0/8, which the default rule table sends direct: through the tunnel here.
    mode: 'global',
    ...over,
    // The rig's nodes sit at private 10.K addresses, which a real list may not name by default.
    vpngate: { allowPrivateNodes: true, ...over.vpngate },
    groups: { urlTest: { url: rig.url('/generate_204'), intervalMs: 600_000 }, ...over.groups },
    switching: { healthDnsName: 'files.test', ...over.switching },
  };
}

/**
 * The config file of a `gatehop` process over the rig (the CLI's own flags name the list, ports and
 * data dir): private nodes allowed, the rig's URL test and DNS health name; `over` wins. Returns its path.
 */
export function writeRigCliConfig(rig: Rig, path: string, over: ConfigInput = {}): string {
  writeFileSync(
    path,
    JSON.stringify({
      ...over,
      vpngate: { allowPrivateNodes: true, ...over.vpngate },
      groups: { urlTest: { url: rig.url('/generate_204'), intervalMs: 600_000 }, ...over.groups },
      switching: { healthDnsName: 'files.test', ...over.switching },
    }),
  );
  return path;
}

/** A logger writing JSON lines to `path` synchronously, so a failing test can read them at once. */
export function fileLogger(path: string, level = 'info'): Logger {
  return pino({ level, base: undefined }, pino.destination({ dest: path, sync: true }));
}

/**
 * The honesty checks (#43) aimed at the rig's own "internet" instead of the public targets it
 * cannot reach: files.test as the DNS canary, names under nx.test (a zone with no names) for
 * NXDOMAIN, the fixed page /honesty.txt, TLS to tls.rig.test and DNS over HTTPS at doh.rig.test
 * (both with certificates from the rig's "public" root: install it with installPublicRoot).
 */
export function rigHonesty(rig: Rig): Pick<ConfigInput, 'honesty' | 'dohServers'> {
  const inet = rig.state.inetAddress;
  return {
    honesty: {
      dns: { canaries: [{ name: 'files.test', addresses: [inet] }], nxdomainZone: 'nx.test' },
      http: [
        { url: 'http://files.test/honesty.txt', status: 200, body: HONESTY_BODY },
        { url: 'http://files.test/honesty.html', status: 200, body: HONESTY_PAGE },
      ],
      tls: [{ host: 'tls.rig.test', port: 443 }],
      timeoutMs: 15_000,
      // A random moment within seconds, not minutes, of a node's first use: the rig's tests wait for verdicts.
      inUseWithinMs: 3_000,
    },
    dohServers: [{ address: inet, serverName: 'doh.rig.test', port: 443, path: '/dns-query' }],
  };
}

/**
 * Starts a core over the rig and waits until it is up, as every rig test and bench needs: a first
 * tunnel and (unless `settle` is false) its first switch settled, or, with `tunnels`, that many
 * balance members. A core that never gets there is stopped before the error is thrown.
 */
export async function startRigCore(
  config: GatehopConfig,
  logger: Logger,
  o: { tunnels?: number; settle?: boolean; extras?: StartExtras } = {},
): Promise<RunningApp> {
  const app = await startApp(config, logger, o.extras);
  try {
    if (o.tunnels !== undefined) {
      const want = o.tunnels;
      await eventually(
        () => app.manager!.members.length === want,
        90_000,
        () => `${want} tunnels up (have ${app.manager!.members.length})`,
      );
    } else {
      await until(() => app.controller!.active ?? undefined, 60_000, 'a first tunnel');
      if (o.settle !== false)
        await eventually(() => app.controller!.state === 'idle', 30_000, 'the first switch settled');
    }
  } catch (err) {
    await app.stop();
    throw err;
  }
  return app;
}
