import type { Logger } from '../../common/index.js';
import type { LinkSpec, OpenedLink } from '../tunnel-link.js';
import { openOpenVpnLink } from './openvpn-link.js';
import { openSeVpnLink } from './sevpn-link.js';
import { openSstpLink } from './sstp-link.js';

/** The one place that picks a tunnel client by protocol. */
export function openLink(
  spec: LinkSpec,
  o: { logger: Logger; timeoutMs: number; signal?: AbortSignal },
): Promise<OpenedLink> {
  switch (spec.protocol) {
    case 'openvpn':
      return openOpenVpnLink(spec, o);
    case 'sstp':
      return openSstpLink(spec, o);
    case 'sevpn':
      return openSeVpnLink(spec, o);
  }
}
