import { silentLogger } from '../../core/common/index.js';
import { DirectEgress, SingleEgressSource } from '../../core/egress/index.js';
import type { Egress } from '../../core/contracts/index.js';
import {
  Credentials,
  formatAuthLine,
  ProxyServer,
  proxyOptionsSchema,
  type ProxyOptions,
} from '../../core/proxy/index.js';

export interface RunningProxy {
  server: ProxyServer;
  port: number;
  egress: Egress;
  close(): Promise<void>;
}

export const TEST_USER = { username: 'alice', password: 'wonder land:1' };

export function testCredentials(): Credentials {
  return Credentials.parse(formatAuthLine(TEST_USER.username, TEST_USER.password));
}

/** A proxy on 127.0.0.1:0 in this process, over the given egress (DirectEgress by default). */
export async function startProxy(
  opts: Partial<Omit<ProxyOptions, 'credentials'>> & { credentials?: Credentials | null; egress?: Egress } = {},
): Promise<RunningProxy> {
  const { egress = new DirectEgress(), credentials = null, ...rest } = opts;
  const options: ProxyOptions = { ...proxyOptionsSchema.parse({ port: 0, ...rest }), credentials };
  const server = new ProxyServer(options, new SingleEgressSource(egress), silentLogger());
  const at = await server.listen();
  return {
    server,
    port: at.port,
    egress,
    close: async () => {
      await server.close();
      await egress.close();
    },
  };
}
