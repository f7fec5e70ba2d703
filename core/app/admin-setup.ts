import { join } from 'node:path';
import { ErrorCodes, GatehopError, formatEndpoint, type Endpoint, type Logger } from '../common/index.js';
import {
  AdminServer,
  DASHBOARD_PASSWORD_FILE,
  DashboardLogin,
  loadOrCreateAdminToken,
  type AdminCore,
  type SettingsAccess,
} from '../api/index.js';
import type { RoutingState } from '../router/index.js';
import { adminSocketPath } from './admin-call.js';
import type { GatehopConfig } from './config.js';
import { importRules } from './clash-import.js';

/**
 * The admin API at `where` (config.admin): its token (the config's, or `<data-dir>/admin-token`, made once),
 * the CLI's socket beside the data (only this user can reach it), listening; and the dashboard's
 * address with the token for the window and the log.
 */
export async function startAdminApi(
  core: AdminCore,
  where: Endpoint,
  config: GatehopConfig,
  logger: Logger,
): Promise<{ admin: AdminServer; at: Endpoint; dashboardUrl: string }> {
  const { token, source: tokenSource } = loadOrCreateAdminToken(config.adminToken, join(config.dataDir, 'admin-token'));
  const admin = new AdminServer(
    core,
    {
      host: where.host,
      port: where.port,
      token,
      corsOrigins: config.adminCorsOrigins,
      hostNames: config.adminHosts,
      login: new DashboardLogin(join(config.dataDir, DASHBOARD_PASSWORD_FILE)),
      // The CLI's way in (callRunningCore): a socket only this user can reach.
      ...(process.platform !== 'win32' ? { socketPath: adminSocketPath(config.dataDir) } : {}),
    },
    logger,
  );
  const at = await admin.listen().catch((err: NodeJS.ErrnoException) => {
    throw new GatehopError(
      ErrorCodes.LISTEN_FAILED,
      `admin API cannot listen on ${formatEndpoint(where)}: ${err.code ?? err.message}`,
      { cause: err },
    );
  });
  logger.info(
    {
      event: 'admin-listening',
      address: formatEndpoint(at),
      token: tokenSource === 'config' ? 'from config' : join(config.dataDir, 'admin-token'),
    },
    'admin API listening',
  );
  return { admin, at, dashboardUrl: `http://${formatEndpoint(at)}/ui/#token=${encodeURIComponent(token)}` };
}

/** The rule table as the admin API shows and changes it; a mode chosen there is saved with the settings. */
export function routingAccess(
  routing: RoutingState,
  settings: SettingsAccess | null,
  dataDir: string,
): NonNullable<AdminCore['routing']> {
  return {
    get mode() {
      return routing.mode;
    },
    setMode: async (mode) => {
      // Saved where settings are (the next start keeps it); a --mode flag outranks the saved
      // value at a start, so the running table is switched here in any case.
      if (settings) await settings.update({ mode });
      routing.setMode(mode);
    },
    table: () => routing.table(),
    ruleSets: () => routing.status().ruleSets,
    refresh: (name) => routing.refresh(name),
    errors: () => routing.status().errors,
    ...(settings
      ? {
          importRules: (request) =>
            importRules(request, { dataDir, fetchText: (url) => routing.fetchText(url), settings }),
        }
      : {}),
    get custom() {
      return routing.custom;
    },
  };
}
