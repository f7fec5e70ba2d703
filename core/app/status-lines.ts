import { formatEndpoint } from '../common/index.js';
import type { ListStatus } from '../vpngate/index.js';
import type { RunningApp } from './app.js';
import type { GatehopConfig } from './config.js';

/** The line `gatehop` prints when it is ready: where it listens, what it goes out through. */
export function describeListening(app: RunningApp, config: GatehopConfig): string {
  const admin = app.listening.admin ? `http://${formatEndpoint(app.listening.admin)}` : 'off';
  const egress = app.nodes ? `vpngate (${describeList(app.nodes.status())})` : app.egress.id;
  return `gatehop ready: proxy socks5+http://${formatEndpoint(app.listening.proxy)} egress=${egress} admin=${admin}${config.upstream ? ` upstream=${config.upstream.proxy.display}` : ''}`;
}

/** "97 nodes, list via mirror http://…" or, with none yet, what was tried. */
export function describeList(l: ListStatus): string {
  const failed = l.sources.filter((s) => s.ok === false);
  if (l.nodes > 0)
    return `${l.nodes} nodes, list via ${l.via}${l.source && l.source !== 'import' ? ` ${l.source}` : ''}${failed.length ? `; ${failed.length} of ${l.sources.length} sources failed` : ''}`;
  const tried = failed.map((s) => `${s.url} (${s.via ?? 'direct'}): ${s.error ?? 'failed'}`);
  return `0 nodes; no list yet${tried.length ? `: tried ${tried.length} source${tried.length === 1 ? '' : 's'}, ${tried.slice(0, 3).join('; ')}${tried.length > 3 ? '; …' : ''}` : ''}; waiting for the network, retrying`;
}
