import { connect, type Socket } from 'node:net';
import { ErrorCodes, GatehopError, settleFirst } from '../common/index.js';
import { classifyAddress, isLocalName } from './address.js';
import { dialThroughUpstream, type UpstreamProxy } from './upstream-proxy.js';
import type { Dialer } from './http-get.js';

/** Straight out of this machine, names through the system resolver. */
export function directDialer(): Dialer {
  return {
    via: 'direct',
    dial: (host, port, signal) =>
      settleFirst<Socket>({ signal, what: `connect to ${host}:${port}` }, (settle) => {
        const s = connect({ host, port, noDelay: true });
        const onError = (err: NodeJS.ErrnoException): void =>
          settle.reject(
            new GatehopError(ErrorCodes.LIST_FETCH_FAILED, `connect to ${host}:${port}: ${err.code ?? err.message}`, {
              cause: err,
            }),
          );
        s.once('error', onError);
        s.once('connect', () => settle.resolve(s));
        return (resolved) => {
          s.off('error', onError);
          if (!resolved) s.destroy();
        };
      }),
  };
}

/** Through the user's upstream proxy; the proxy resolves the names. */
export function upstreamDialer(up: UpstreamProxy): Dialer {
  return {
    via: 'upstream',
    resolvesNearby: isLocalHost(up.host),
    dial: (host, port, signal) => dialThroughUpstream(up, host, port, { signal }),
  };
}

/**
 * True for a host that is this machine (always) or its LAN (unless `lan` is false, as in the global
 * routing mode, which sends the LAN through the tunnel too).
 */
export function isLocalHost(host: string, lan = true): boolean {
  if (isLocalName(host)) return true;
  const c = classifyAddress(host);
  if (c === 'loopback' || c === 'unspecified') return true;
  return lan && c !== null && c !== 'public' && c !== 'reserved';
}

/**
 * Gatehop's own requests follow the routing's first rule: a source on this machine or the LAN is
 * dialled straight, never through the upstream proxy or a tunnel (neither can reach the user's
 * loopback or LAN). Everything else goes the way `inner` goes.
 */
export function localGoesDirect(inner: Dialer, lanIsLocal: () => boolean = () => true): Dialer {
  if (inner.via === 'direct') return inner;
  const direct = directDialer();
  return {
    via: inner.via,
    dial: (host, port, signal) =>
      isLocalHost(host, lanIsLocal()) ? direct.dial(host, port, signal) : inner.dial(host, port, signal),
  };
}
