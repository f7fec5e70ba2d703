import { ErrorCodes, formatEndpoint, GatehopError, type Endpoint, type Logger } from '../common/index.js';
import { DirectEgress, SingleEgressSource, type Egress } from '../egress/index.js';
import { Credentials, ProxyServer } from '../socks5/index.js';
import type { GatehopConfig } from './config.js';

export interface RunningApp {
  readonly proxy: ProxyServer;
  readonly egress: Egress;
  readonly listening: { proxy: Endpoint };
  /** Stops accepting, closes every session and egress. Idempotent. */
  stop(): Promise<void>;
}

/** Assembles and starts the core: egress → proxy front end. */
export async function startApp(config: GatehopConfig, logger: Logger): Promise<RunningApp> {
  if (config.egress !== 'direct') {
    throw new GatehopError(
      ErrorCodes.CONFIG_INVALID,
      `egress "${config.egress}" is not available yet in this build; use --egress direct`,
    );
  }
  const credentials = config.authFile ? Credentials.load(config.authFile) : null;
  const egress = new DirectEgress('direct');
  const proxy = new ProxyServer(
    { ...config.proxy, host: config.listen.host, port: config.listen.port, credentials },
    new SingleEgressSource(egress),
    logger,
  );
  let proxyAt: Endpoint;
  try {
    proxyAt = await proxy.listen();
  } catch (err) {
    await egress.close();
    throw err;
  }
  let stopping: Promise<void> | null = null;
  return {
    proxy,
    egress,
    listening: { proxy: proxyAt },
    stop: () =>
      (stopping ??= (async () => {
        await proxy.close();
        await egress.close();
        logger.info({ event: 'stopped' }, 'gatehop stopped');
      })()),
  };
}

export function describeListening(app: RunningApp, config: GatehopConfig): string {
  const admin = config.admin ? `${formatEndpoint(config.admin)} (admin API not in this build yet)` : 'off';
  return `gatehop ready: proxy socks5+http://${formatEndpoint(app.listening.proxy)} egress=${app.egress.id} admin=${admin}`;
}
