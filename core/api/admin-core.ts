import type { LogTap } from '../common/index.js';
import type { EgressManager } from '../egress/index.js';
import type { PoolRecovery, SwitchController } from '../groups/index.js';
import type { Selector } from '../selector/index.js';
import type { ProxyServer } from '../socks5/index.js';
import type { Store } from '../store/index.js';
import type { NodeList } from '../vpngate/index.js';

/** What the admin API reads and steers; the app assembles it (the API never imports core/app). */
export interface AdminCore {
  readonly version: string;
  readonly startedAt: number;
  readonly egressKind: 'direct' | 'vpngate';
  readonly proxyAddress: string;
  readonly proxy: ProxyServer;
  readonly manager: EgressManager | null;
  readonly controller: SwitchController | null;
  readonly nodes: NodeList | null;
  readonly selector: Selector | null;
  readonly store: Store | null;
  readonly logTap: LogTap | null;
  /** Retrying a start without network (vpngate egress); absent in older embedders = null. */
  readonly recovery?: PoolRecovery | null;
}
