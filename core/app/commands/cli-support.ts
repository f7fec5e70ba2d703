import { errorToJson } from '../../common/index.js';
import { buildConfig, readConfigFile } from '../config.js';

/** Says why on stderr and ends the process: 2 for a usage or config error, 1 for a failure. */
export function fail(message: string, exitCode: number): never {
  process.stderr.write(`gatehop: ${message}\n`);
  process.exit(exitCode);
}

/** The config the daemon would use, for the subcommands that share its --data-dir and --config. */
export function subcommandConfig(opts: {
  dataDir?: string;
  config?: string;
  listen?: string;
  admin?: string;
  allowPrivateNodes?: boolean;
}) {
  try {
    const fromFile = opts.config ? readConfigFile(opts.config) : {};
    const flags: Record<string, unknown> = {};
    if (opts.admin) flags.admin = opts.admin;
    if (opts.dataDir) flags.dataDir = opts.dataDir;
    if (opts.listen) flags.listen = opts.listen;
    if (opts.allowPrivateNodes) flags.vpngate = { allowPrivateNodes: true };
    return buildConfig(fromFile, flags);
  } catch (err) {
    return fail(errorToJson(err).message, 2);
  }
}

/** A secret from stdin (at most 64 KiB). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) fail('password on stdin is too long', 2);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
