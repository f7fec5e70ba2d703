import { ErrorCodes } from '../common/index.js';
import { CommandError } from './runner.js';
import { hostPort, type FlatSettings, type ProxyBackend, type ProxyTarget, type Runner, pacUrlOf } from './types.js';

/**
 * macOS: `networksetup` on every enabled network service. Per service the keys are
 * `<service>\t<field>` with fields web, secureweb, socks (each "on|off host port"), bypass
 * (one domain per line, empty = none) and autoproxy ("on|off url"). networksetup exits 14 when it
 * needs an administrator; that becomes GH_ERR_SYSPROXY_DENIED.
 */
const NS = 'networksetup';
const KINDS = {
  web: ['-getwebproxy', '-setwebproxy', '-setwebproxystate'],
  secureweb: ['-getsecurewebproxy', '-setsecurewebproxy', '-setsecurewebproxystate'],
  socks: ['-getsocksfirewallproxy', '-setsocksfirewallproxy', '-setsocksfirewallproxystate'],
} as const;
type Kind = keyof typeof KINDS;

const key = (service: string, field: string): string => `${service}\t${field}`;

// ---- the pure command builder ----

/** Services from `-listallnetworkservices`: the first line is a note; a leading * marks a disabled one. */
export function macParseServices(stdout: string): string[] {
  return stdout
    .split('\n')
    .slice(1)
    .map((l) => l.trimEnd())
    .filter((l) => l !== '' && !l.startsWith('*'));
}

/** "Enabled: Yes\nServer: h\nPort: 8080\n…" → "on h 8080". */
export function macParseProxy(stdout: string): string {
  const f = fields(stdout);
  return `${/^yes$/i.test(f.Enabled ?? '') ? 'on' : 'off'} ${f.Server ?? ''} ${f.Port ?? '0'}`;
}

/** "URL: (null)\nEnabled: No" → "off " ; a URL with a query string is kept whole. */
export function macParseAutoProxy(stdout: string): string {
  const f = fields(stdout);
  const url = f.URL && f.URL !== '(null)' ? f.URL : '';
  return `${/^yes$/i.test(f.Enabled ?? '') ? 'on' : 'off'} ${url}`;
}

/** One domain per line, or the sentence "There aren't any bypass domains set on …" for none. */
export function macParseBypass(stdout: string): string {
  if (/aren't any bypass domains/i.test(stdout)) return '';
  return stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join('\n');
}

function fields(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

export function macReadCommands(service: string): Array<{ key: string; argv: string[]; parse: (s: string) => string }> {
  return [
    ...(Object.keys(KINDS) as Kind[]).map((k) => ({
      key: key(service, k),
      argv: [KINDS[k][0], service],
      parse: macParseProxy,
    })),
    { key: key(service, 'bypass'), argv: ['-getproxybypassdomains', service], parse: macParseBypass },
    { key: key(service, 'autoproxy'), argv: ['-getautoproxyurl', service], parse: macParseAutoProxy },
  ];
}

/** networksetup argv lists that turn `from` into `to`, service by service. */
export function macWriteCommands(to: FlatSettings, from: FlatSettings): string[][] {
  const out: string[][] = [];
  for (const k of Object.keys(to)) {
    const v = to[k] ?? '';
    if (v === (from[k] ?? '')) continue;
    const [service, field] = k.split('\t') as [string, string];
    if (field === 'bypass') {
      const domains = v.split('\n').filter(Boolean);
      out.push(['-setproxybypassdomains', service, ...(domains.length ? domains : ['Empty'])]);
    } else if (field === 'autoproxy') {
      const [state, ...rest] = v.split(' ');
      const url = rest.join(' ');
      if (url) out.push(['-setautoproxyurl', service, url]);
      out.push(['-setautoproxystate', service, state === 'on' ? 'on' : 'off']);
    } else if (field in KINDS) {
      const [state, host, port] = v.split(' ') as [string, string, string];
      const names = KINDS[field as Kind];
      // networksetup turns a proxy on when it sets its server; the state command comes after.
      if (host) out.push([names[1], service, host, port]);
      out.push([names[2], service, state === 'on' ? 'on' : 'off']);
    }
  }
  return out;
}

export function macDesired(target: ProxyTarget, current: FlatSettings): FlatSettings {
  const out: FlatSettings = { ...current };
  const services = new Set(Object.keys(current).map((k) => k.split('\t')[0]!));
  const bypass = target.bypass.map((b) => (b === '<local>' ? '*.local' : b)).join('\n');
  for (const s of services) {
    // With Gatehop's PAC: the script on and the proxies off (it names the proxy itself); without: the
    // proxies on and any PAC off (it would win over them), its URL kept.
    const state = target.pacUrl ? 'off' : 'on';
    for (const k of Object.keys(KINDS)) out[key(s, k)] = `${state} ${target.host} ${target.port}`;
    out[key(s, 'bypass')] = bypass;
    const auto = (current[key(s, 'autoproxy')] ?? 'off ').split(' ');
    out[key(s, 'autoproxy')] = target.pacUrl ? `on ${target.pacUrl}` : `off ${auto.slice(1).join(' ')}`;
  }
  return out;
}

export function macOff(current: FlatSettings): FlatSettings {
  const out: FlatSettings = { ...current };
  for (const [k, v] of Object.entries(current)) {
    const field = k.split('\t')[1]!;
    if ((field in KINDS || field === 'autoproxy') && v) out[k] = v.replace(/^on\b/, 'off');
  }
  return out;
}

export function macPointsAt(s: FlatSettings, host: string, port: number): boolean {
  return Object.entries(s).some(([k, v]) => {
    const field = k.split('\t')[1]!;
    if (field === 'autoproxy') return v === `on ${pacUrlOf(host, port)}`;
    if (!(field in KINDS) || !v) return false;
    const [state, h, p] = v.split(' ');
    return state === 'on' && h === host && Number(p) === port;
  });
}

export function macDescribe(s: FlatSettings): string {
  const services = [...new Set(Object.keys(s).map((k) => k.split('\t')[0]!))];
  return services
    .map((svc) => {
      const on = Object.keys(KINDS).flatMap((k) => {
        const [state, h, p] = (s[key(svc, k)] ?? 'off').split(' ');
        return state === 'on' ? [`${k} ${hostPort(h ?? '', Number(p))}`] : [];
      });
      const [autoState, ...url] = (s[key(svc, 'autoproxy')] ?? 'off').split(' ');
      if (autoState === 'on') on.push(`PAC ${url.join(' ')}`);
      return `${svc}: ${on.join(', ') || 'none'}`;
    })
    .join('; ');
}

// ---- the thin runner layer ----

export function macosBackend(run: Runner): ProxyBackend {
  const ns = async (args: string[]): Promise<string> => {
    try {
      return (await run(NS, args)).stdout;
    } catch (err) {
      if (err instanceof CommandError && err.exitCode === 14) {
        throw new CommandError(
          NS,
          args,
          14,
          'networksetup needs an administrator to change proxy settings (exit 14): run Gatehop as a user who is an administrator, or set the proxy in System Settings → Network → Details → Proxies',
          ErrorCodes.SYSPROXY_DENIED,
          err,
        );
      }
      throw err;
    }
  };
  return {
    id: 'macos',
    label: 'macOS network services (networksetup)',
    async read() {
      const out: FlatSettings = {};
      for (const service of macParseServices(await ns(['-listallnetworkservices']))) {
        for (const c of macReadCommands(service)) out[c.key] = c.parse(await ns(c.argv));
      }
      return out;
    },
    async write(to, from) {
      for (const argv of macWriteCommands(to, from)) await ns(argv);
    },
    desired: macDesired,
    off: macOff,
    pointsAt: macPointsAt,
    describe: macDescribe,
  };
}
