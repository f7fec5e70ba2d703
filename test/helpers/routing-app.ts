import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig, startApp, type ConfigInput, type RunningApp } from '../../core/app/index.js';
import { silentLogger } from '../../core/common/index.js';

/**
 * A core on the direct egress in rule mode with `rules` (TUNNEL and DIRECT both leave from this
 * host, so tests tell routes apart by REJECT, by counters or by what a rule needs): any free port,
 * no admin API, no log file.
 */
export function startRoutingApp(rules: string[], over: ConfigInput = {}): Promise<RunningApp> {
  return startApp(
    buildConfig(
      {},
      {
        egress: 'direct',
        listen: '127.0.0.1:0',
        admin: 'off',
        logFile: 'off',
        dataDir: mkdtempSync(join(tmpdir(), 'gh-routing-')),
        mode: 'rule',
        rules,
        ...over,
      },
    ),
    silentLogger(),
  );
}
