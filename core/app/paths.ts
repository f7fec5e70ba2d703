import { homedir } from 'node:os';
import { join } from 'node:path';

/** The OS application-data folder, as Electron's app.getPath('appData') names it, plus "Gatehop". */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'Gatehop');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'Gatehop');
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'Gatehop');
}
