import type { LinkSpec, OpenedLink } from '../tunnel-link.js';
import type { LinkOpenOptions } from './link-base.js';
import { openOpenVpnLink } from './openvpn-link.js';
import { openSeVpnLink } from './sevpn-link.js';
import { openSstpLink } from './sstp-link.js';

/** The one place that picks a tunnel client by protocol. */
export function openLink(spec: LinkSpec, o: LinkOpenOptions): Promise<OpenedLink> {
  switch (spec.protocol) {
    case 'openvpn':
      return openOpenVpnLink(spec, o);
    case 'sstp':
      return openSstpLink(spec, o);
    case 'sevpn':
      return openSeVpnLink(spec, o);
  }
}
