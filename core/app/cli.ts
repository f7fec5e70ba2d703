import { Command } from 'commander';
import {
  errorToJson,
  isGatehopError,
  ErrorCodes,
  LogTap,
  raiseMallocTrimThreshold,
  makePrivateDir,
  openLogger,
  withDeadline,
} from '../common/index.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DASHBOARD_PASSWORD_FILE, DASHBOARD_USER } from '../api/index.js';
import { RESTORE_DEADLINE_MS } from '../sysproxy/index.js';
import { upsertAuthFile } from '../proxy/index.js';
import { readConfigFile, type ConfigInput } from './config.js';
import { startApp } from './app.js';
import { describeListening } from './status-lines.js';
import { lanDashboardUrls } from './dashboard-links.js';
import { checkSetup, describeSources, formatProblem } from './check.js';
import { importListCommand } from './commands/import-list.js';
import { runCommand, terminalCommand } from './commands/run-command.js';
import {
  checkSupervisedCore,
  startTunMode,
  superviseTunCore,
  supervisorChannel,
  tunGroupId,
  tunOff,
  tunUser,
  type SupervisorChannel,
  type TunMode,
} from '../capture/index.js';
import { importRulesCommand } from './commands/clash-import-command.js';
import { fail, readStdin, subcommandConfig } from './commands/cli-support.js';
import { shareCommand } from './commands/share-command.js';
import { trafficCommand } from './commands/traffic-command.js';
import { sysproxyCommand } from './commands/sysproxy-command.js';
import { serviceInstall, serviceUninstall } from './commands/service-command.js';
import { collect, flagsToConfig, positiveInt, upstreamNodes, type RunFlags } from './commands/run-flags.js';

export { ADMIN_TOKEN_ENV } from './commands/run-flags.js';
import { resolveConfig } from './settings-file.js';

const VERSION = '0.1.0';

/**
 * `sudo gatehop --tun`: this process stays root as TUN mode's supervisor and runs the core (this
 * same command) as the user; it reads no config and opens no log, so nothing in the user's data
 * dir is root's.
 */
async function superviseTun(flags: RunFlags): Promise<never> {
  let code: number;
  try {
    const options = {
      name: flags.tunName ?? 'gh-tun0',
      strict: flags.tunStrict === true,
      gid: tunGroupId(flags.tunGid),
      allow: flags.tunAllow ?? [],
    };
    code = await superviseTunCore(options, tunUser(flags.tunUser));
  } catch (err) {
    fail(errorToJson(err).message, 2);
  }
  process.exit(code);
}

async function run(flags: RunFlags): Promise<void> {
  // TUN mode: as root, be its supervisor; as the core it started, check that before any socket.
  let tunChannel: SupervisorChannel | null = null;
  if (flags.tun) {
    const channel = supervisorChannel();
    if (!channel && process.getuid?.() === 0) return superviseTun(flags);
    try {
      tunChannel = checkSupervisedCore(channel);
    } catch (err) {
      fail(errorToJson(err).message, 2);
    }
    // The supervisor went (killed, say): a core with nobody to lower its routes stops at once.
    tunChannel.onGone(() => {
      process.stderr.write('gatehop: the TUN mode supervisor is gone; stopping\n');
      process.kill(process.pid, 'SIGTERM');
    });
  }
  let config;
  let layers;
  try {
    layers = { fromFile: flags.config ? readConfigFile(flags.config) : {}, fromFlags: flagsToConfig(flags) };
    config = resolveConfig(layers.fromFile, layers.fromFlags);
  } catch (err) {
    fail(errorToJson(err).message, 2);
  }
  const logTap = new LogTap();
  const logger = await openLogger({ level: config.logLevel, file: config.logFile, tap: logTap });
  raiseMallocTrimThreshold();
  let app;
  try {
    // A reload (SIGHUP, POST /reload) reads the config file again; the flags stay as given.
    const fromFlags = layers.fromFlags;
    const readLayers = (): { fromFile: ConfigInput; fromFlags: ConfigInput } => ({
      fromFile: flags.config ? readConfigFile(flags.config) : {},
      fromFlags,
    });
    app = await startApp(config, logger, { logTap, layers, readLayers });
  } catch (err) {
    const code = isGatehopError(err) && err.code === ErrorCodes.CONFIG_INVALID ? 2 : 1;
    fail(errorToJson(err).message, code);
  }
  let tun: TunMode | null = null;
  if (tunChannel) {
    try {
      if (!app.capture) throw new Error('the capture socket is not listening (see the log)');
      tun = await startTunMode(
        app.capture,
        { name: flags.tunName ?? 'gh-tun0', strict: flags.tunStrict === true },
        tunChannel,
        logger,
      );
    } catch (err) {
      await app.stop();
      fail(`TUN mode: ${errorToJson(err).message}`, 1);
    }
  }
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (++signals > 1) process.exit(1); // a second signal means "now"
    logger.info({ event: 'shutdown', signal }, 'shutting down');
    // TUN mode first: the host's traffic back on its own routes before the proxy closes.
    (tun ? tun.stop() : Promise.resolve())
      .then(() => app.stop())
      .then(
        () => process.exit(0),
        (err: unknown) => fail(`shutdown failed: ${errorToJson(err).message}`, 1),
      );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // SIGHUP reloads the config (as daemons do); a bad one is refused and logged, the old one runs on.
  process.on('SIGHUP', () => {
    logger.info({ event: 'reload-signal' }, 'SIGHUP: reloading the config');
    app.reload().then(
      (r) =>
        process.stdout.write(
          `gatehop reloaded: ${r.applied.join(', ') || 'nothing changed'}${r.restartRequired.length ? `; after a restart: ${r.restartRequired.join(', ')}` : ''}; proxy ${r.listen}\n`,
        ),
      (err: unknown) =>
        process.stderr.write(`gatehop: reload refused, the running config stays: ${errorToJson(err).message}\n`),
    );
  });
  // A fatal error still puts the user's proxy settings back before the process ends (unless the
  // kill switch holds them): the restore with a deadline of its own (one slow OS command), the
  // proxy still listening, then the stop's 5 s.
  const onFatal = (err: unknown): void => {
    logger.fatal({ event: 'fatal', err: errorToJson(err) }, `fatal: ${errorToJson(err).message}`);
    withDeadline(app.systemProxy.release(), RESTORE_DEADLINE_MS)
      .then(() => withDeadline(app.stop(), 5_000))
      .finally(() => process.exit(1))
      .catch(() => process.exit(1));
  };
  process.on('uncaughtException', onFatal);
  process.on('unhandledRejection', onFatal);
  // Ready is said only now: a supervisor (or a test) may send SIGTERM the moment it reads the
  // line, and before process.on('SIGTERM') the default action kills the process on the spot.
  process.stdout.write(`${describeListening(app, config)}\n`);
  // The token rides in the fragment: browsers never send it to the server or into its logs.
  if (app.dashboardUrl) process.stdout.write(`dashboard: ${app.dashboardUrl}\n`);
  // With a dashboard password the LAN link carries no token: the page asks for the password.
  const withPassword = existsSync(join(config.dataDir, DASHBOARD_PASSWORD_FILE));
  for (const url of lanDashboardUrls(app.dashboardUrl, config.admin))
    process.stdout.write(
      withPassword
        ? `dashboard from your network: ${url.replace(/#token=.*$/, '')} (it asks for the dashboard password)\n`
        : `dashboard from your network: ${url}\n`,
    );
  logger.info({ event: 'started', proxy: app.listening.proxy, egress: app.egress.id }, 'gatehop started');
}

/** The daemon's flags; `gatehop check` takes the same ones. */
function withRunOptions(cmd: Command): Command {
  return cmd
    .option('--listen <host:port>', 'proxy listen address (default 127.0.0.1:1080)')
    .option('--egress <kind>', 'direct | vpngate (default vpngate)')
    .option('--admin <host:port|off>', 'admin API address (default 127.0.0.1:9090)')
    .option('--admin-token-file <file>', `admin API bearer token, read from a file (or set ${'GATEHOP_ADMIN_TOKEN'})`)
    .option('--admin-token <token>', 'admin API bearer token (visible in the process list: prefer --admin-token-file)')
    .option('--data-dir <dir>', 'where state and logs live (default: the OS app-data folder)')
    .option('--auth-file <file>', 'proxy users, one user:scrypt:… line each (see "gatehop passwd")')
    .option('--no-auth', 'allow a proxy without credentials on a non-loopback address')
    .option('--config <file>', 'YAML config file; flags override it')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (default info)')
    .option('--log-file <file|off>', 'JSON log file (default <data-dir>/logs/gatehop.log)')
    .option('--api <url>', 'VPN Gate list endpoint, repeatable, tried in order (replaces the official ones)', collect)
    .option('--ovpn <file>', 'your own .ovpn profile as a node, repeatable (only these: no list is fetched)', collect)
    .option('--list-source <url>', 'another place that serves the VPN Gate list (same CSV), repeatable', collect)
    .option('--allow-private-nodes', 'dial nodes and mirrors a list names at private (LAN) addresses; off by default')
    .option(
      '--upstream <url>',
      'your other proxy, socks5://[user:pass@]host:port or http://host:port: the list and TCP nodes go through it',
    )
    .option(
      '--upstream-nodes <when>',
      'tunnels through --upstream: always (default), fallback (direct first; through it on a network where no node answers directly, remembered) or never (only the list)',
      upstreamNodes,
    )
    .option(
      '--protocols <list>',
      'the protocols nodes are tried with, in order: openvpn,sevpn,sstp (default), any of them in any order, or one',
    )
    .option('--node-ca <file>', 'a CA certificate (PEM) trusted like the OS roots for nodes, under their DDNS name')
    .option('--sstp-ca <file>', 'the old name of --node-ca')
    .option('--mode <mode>', 'rule (the rule table decides, default), global (everything through the tunnel) or direct')
    .option('--system-proxy', 'point the OS proxy settings at Gatehop while it runs (restored on exit)')
    .option(
      '--tun',
      "TUN mode (Linux, sudo): every program's traffic through Gatehop, by policy routing; the core runs as you",
    )
    .option(
      '--tun-strict',
      'with --tun: drop what does not go through Gatehop, also after a crash (until `gatehop tun off`)',
    )
    .option('--tun-name <name>', 'the TUN device (default gh-tun0)')
    .option(
      '--tun-gid <gid>',
      "the group Gatehop's own sockets are known by (default: the group gatehop-tun, made if missing)",
    )
    .option(
      '--tun-user <user>',
      'with --tun: the user Gatehop runs as (default: the one sudo or pkexec ran for; never root)',
    )
    .option(
      '--tun-allow <cidr>',
      'with --tun-strict: a network reached directly (repeatable), e.g. the LAN',
      collect,
      [],
    )
    .option(
      '--kill-switch',
      'keep the OS proxy pointed at Gatehop when it stops, so programs that use it stay offline instead of going direct',
    )
    .option('--max-sessions <n>', 'concurrent proxy sessions (default 1024)', positiveInt)
    .option('--handshake-timeout-ms <ms>', 'handshake deadline (default 10000)', positiveInt)
    .option('--connect-timeout-ms <ms>', 'upstream connect deadline (default 15000)', positiveInt)
    .option('--idle-timeout-ms <ms>', 'close a session idle this long (default 300000)', positiveInt);
}

export function buildCli(): Command {
  const program = withRunOptions(
    new Command('gatehop')
      .description('One local SOCKS5 + HTTP proxy over the VPN Gate volunteer network')
      .version(VERSION),
  )
    .enablePositionalOptions()
    .showHelpAfterError()
    .configureOutput({ writeErr: (s) => process.stderr.write(s.startsWith('error:') ? `gatehop: ${s}` : s) })
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    .action((flags: RunFlags) => run(flags));

  program
    .command('passwd')
    .description('add or change a proxy user; the password is read from stdin')
    .argument('<user>', 'user name')
    .requiredOption('--auth-file <file>', 'the auth file to write')
    .action(async (user: string, opts: { authFile: string }) => {
      const text = await readStdin();
      const password = text.split(/\r?\n/)[0] ?? '';
      if (password === '') fail('empty password on stdin', 2);
      try {
        upsertAuthFile(opts.authFile, user, password);
      } catch (err) {
        fail(errorToJson(err).message, 1);
      }
      process.stdout.write(`gatehop: user ${user} written to ${opts.authFile}\n`);
    });
  program
    .command('dashboard-password')
    .description('set the password the dashboard asks for on a LAN address (read from stdin); no restart needed')
    .option('--data-dir <dir>', 'the data directory the daemon uses')
    .option('--config <file>', 'the config file the daemon uses')
    .action(async (opts: { dataDir?: string; config?: string }) => {
      const config = subcommandConfig(opts);
      const password = (await readStdin()).split(/\r?\n/)[0] ?? '';
      if (password.length < 8) fail('the dashboard password must be at least 8 characters (on stdin)', 2);
      const file = join(config.dataDir, DASHBOARD_PASSWORD_FILE);
      try {
        makePrivateDir(config.dataDir);
        upsertAuthFile(file, DASHBOARD_USER, password);
      } catch (err) {
        fail(errorToJson(err).message, 1);
      }
      process.stdout.write(`gatehop: dashboard password written to ${file}\n`);
    });
  withRunOptions(
    program
      .command('check')
      .description(
        'check the config, the --ovpn profiles and the cached node list without starting (exit 0: all is well, 1: problems)',
      ),
  ).action((flags: RunFlags) => {
    const where = { ...(flags.config ? { configPath: flags.config } : {}), flags: flagsToConfig(flags) };
    const problems = checkSetup(where);
    try {
      for (const line of describeSources(where)) process.stdout.write(`${line}\n`);
    } catch (err) {
      problems.push({ where: 'store', message: `the list sources cannot be read: ${errorToJson(err).message}` });
    }
    if (problems.length === 0) {
      process.stdout.write('gatehop check: the config, profiles and cached list are fine\n');
      return;
    }
    for (const p of problems) process.stderr.write(`${formatProblem(p)}\n`);
    process.stderr.write(`gatehop check: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n`);
    process.exitCode = 1;
  });

  program
    .command('run')
    .description(
      'run a program with all its traffic (TCP, UDP, names) going through the running Gatehop, no admin rights needed (Linux): gatehop run -- curl https://example.com/',
    )
    .argument('<command...>', 'the program and its arguments (after --)')
    .option('--data-dir <dir>', 'the data directory the running Gatehop uses')
    .option('--config <file>', 'the config file the running Gatehop uses')
    .option('--admin <host:port>', "the running Gatehop's admin API address, when not the config's")
    .passThroughOptions()
    .action((command: string[], opts: { dataDir?: string; config?: string; admin?: string }) =>
      runCommand(command, subcommandConfig(opts)),
    );

  program
    .command('terminal')
    .description(
      "open your terminal with everything in it going through the running Gatehop (Linux; the tray's Open a terminal)",
    )
    .option('--data-dir <dir>', 'the data directory the running Gatehop uses')
    .option('--config <file>', 'the config file the running Gatehop uses')
    .option('--admin <host:port>', "the running Gatehop's admin API address, when not the config's")
    .action((opts: { dataDir?: string; config?: string; admin?: string }) => terminalCommand(subcommandConfig(opts)));

  program
    .command('tun')
    .description(
      "TUN mode's off switch (root): remove its routes, rules and nftables table, strict mode's drop included",
    )
    .argument('<action>', 'off')
    .option('--tun-name <name>', 'the TUN device (default gh-tun0)')
    .action((action: string, opts: { tunName?: string }) => {
      if (action !== 'off') fail(`gatehop tun: unknown action ${action} (off)`, 2);
      if (process.getuid?.() !== 0) fail('gatehop tun off: needs root (sudo gatehop tun off)', 2);
      const { removed } = tunOff(opts.tunName ?? 'gh-tun0');
      process.stdout.write(
        removed.length ? `gatehop tun off: removed ${removed.join(', ')}\n` : 'gatehop tun off: nothing to remove\n',
      );
    });

  program
    .command('import-list')
    .description(
      'add the nodes of a VPN Gate list file (the CSV from /api/iphone/, passed on by e-mail, chat or a mirror) to the pool',
    )
    .argument('<file>', 'the list file')
    .option('--data-dir <dir>', 'the data directory the daemon uses')
    .option('--config <file>', 'the config file the daemon uses')
    .option('--allow-private-nodes', 'keep nodes at private (LAN) addresses; off by default')
    .action((file: string, opts: { dataDir?: string; config?: string; allowPrivateNodes?: boolean }) =>
      importListCommand(file, subcommandConfig(opts)),
    );

  program
    .command('import-rules')
    .description(
      "bring a mihomo/Clash config's rules, sub-rules, rule sets and mode over, mapping each group name to TUNNEL, DIRECT or REJECT",
    )
    .argument('<file|url>', 'the Clash config (YAML), a file or an http(s) URL')
    .option('--map <name=target>', 'map a group name (repeatable): --map "PROXY=TUNNEL"', collect, [])
    .option('--yes', "take Gatehop's guess for every name not mapped, without asking")
    .option('--dry-run', 'show what would be imported and save nothing')
    .option('--set-mode', "take the config's routing mode (rule, global, direct) too; asked on a terminal otherwise")
    .option('--data-dir <dir>', 'the data directory the daemon uses')
    .option('--config <file>', 'the config file the daemon uses')
    .action(
      (
        source: string,
        opts: { map: string[]; yes?: boolean; dryRun?: boolean; setMode?: boolean; dataDir?: string; config?: string },
      ) => {
        const config = subcommandConfig(opts);
        const layers = {
          fromFile: opts.config ? readConfigFile(opts.config) : {},
          fromFlags: opts.dataDir ? { dataDir: opts.dataDir } : {},
        };
        return importRulesCommand(
          source,
          { map: opts.map, yes: !!opts.yes, dryRun: !!opts.dryRun, setMode: !!opts.setMode },
          config,
          layers,
        );
      },
    );

  const sysproxy = program
    .command('sysproxy')
    .description("the OS proxy settings: what they are and Gatehop's saved copy");
  for (const [name, description] of [
    ['status', 'print what the OS has now and what the snapshot holds'],
    ['restore', 'put back the settings saved before Gatehop changed them (after a crash)'],
  ] as const) {
    sysproxy
      .command(name)
      .description(description)
      .option('--data-dir <dir>', 'the data directory the daemon uses')
      .option('--config <file>', 'the config file the daemon uses')
      .action((opts: { dataDir?: string; config?: string }) => sysproxyCommand(name, opts));
  }

  const share = program
    .command('share')
    .description(
      "share this computer's tunnels with other devices on its network (phones, a TV): on a running Gatehop",
    );
  for (const [name, description, arg] of [
    ['status', "print the switch, this computer's LAN addresses and the devices", null],
    ['on', "listen for the devices on this computer's LAN addresses (config share.port)", null],
    ['off', 'stop listening for them; their connections end', null],
    ['add', 'add a device: prints its page as a link and a QR code to scan', '<name>'],
    ['remove', 'stop sharing with a device: its password stops working and its connections end', '<user>'],
  ] as const) {
    const c = share.command(name).description(description);
    if (arg) c.argument(arg);
    c.option('--data-dir <dir>', 'the data directory the daemon uses')
      .option('--config <file>', 'the config file the daemon uses')
      .action((...args: unknown[]) =>
        arg
          ? shareCommand(name, args[0] as string, args[1] as { dataDir?: string; config?: string })
          : shareCommand(name, undefined, args[0] as { dataDir?: string; config?: string }),
      );
  }

  program
    .command('traffic')
    .description('where the bytes went: by node, network, route, rule, program and device, on a running Gatehop')
    .option('--days <n>', 'the last this many days, today included', '30')
    .option('--nodes-only', 'only what went through nodes')
    .option('--csv', "print the ledger's rows as CSV instead")
    .option('--data-dir <dir>', 'the data directory the daemon uses')
    .option('--config <file>', 'the config file the daemon uses')
    .action((opts: { days?: string; nodesOnly?: boolean; csv?: boolean; dataDir?: string; config?: string }) =>
      trafficCommand(opts),
    );

  const service = program
    .command('service')
    .description('start Gatehop at login or at boot, without the desktop app (a systemd unit; Linux)');
  service
    .command('install')
    .description("write the unit (the user's own; --system: the machine's, as root); daemon flags after --")
    .option('--system', "the machine's service: a user of its own, data in /var/lib/gatehop, at boot")
    .option('--print', 'print the unit instead of writing it')
    .argument(
      '[daemon-flags...]',
      'flags the service starts gatehop with, after -- (say -- --listen 0.0.0.0:1080 --auth-file FILE)',
    )
    .action((args: string[], opts: { system?: boolean; print?: boolean }) => serviceInstall(args, opts));
  service
    .command('uninstall')
    .description('remove the unit `service install` wrote')
    .option('--system', "the machine's service")
    .action((opts: { system?: boolean }) => serviceUninstall(opts));
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  await buildCli().parseAsync(argv);
}
