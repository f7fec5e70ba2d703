import QRCode from 'qrcode';
import { callRunningCore } from '../admin-call.js';
import type { ShareState, SharedDevice } from '../../api/index.js';
import { fail, subcommandConfig } from './cli-support.js';

export type ShareAction = 'status' | 'on' | 'off' | 'add' | 'remove';

/**
 * `gatehop share …`: "Share with this network" on a running core (#63), for a box without a
 * window: the switch, the devices, and a new device's page as a link and a QR code in the terminal.
 */
export async function shareCommand(
  action: ShareAction,
  arg: string | undefined,
  opts: { dataDir?: string; config?: string },
): Promise<void> {
  const config = subcommandConfig(opts);
  const json = (data: unknown) => ({ type: 'application/json', data: JSON.stringify(data) });
  const ask = async (method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, body: unknown = null) => {
    const answer = await callRunningCore(config, method, path, body === null ? null : json(body));
    if ('absent' in answer) return fail(`cannot reach Gatehop: ${answer.absent}`, 1);
    if (!answer.ok) {
      const e = (answer.body as { error?: { message?: string } } | null)?.error;
      return fail(e?.message ?? `Gatehop answered ${answer.status}`, 1);
    }
    return answer.body;
  };
  if (action === 'add') {
    if (!arg) fail('say what the device is called: gatehop share add "Mum\'s phone"', 2);
    const device = (await ask('POST', '/share/devices', { name: arg })) as SharedDevice;
    const state = (await ask('GET', '/share')) as ShareState;
    process.stdout.write(`${describeState(state)}\n\nadded ${device.name} (user ${device.id})\n`);
    if (device.pageUrl) {
      process.stdout.write(`open this on the device (its page says what to tap):\n  ${device.pageUrl}\n`);
      process.stdout.write(await QRCode.toString(device.pageUrl, { type: 'utf8', margin: 2 }));
      process.stdout.write(`apps that take a proxy URL: ${device.proxyUrl}\n`);
    } else process.stdout.write('sharing is off: "gatehop share on" first, then its page and code are shown here\n');
    return;
  }
  if (action === 'remove') {
    if (!arg) fail('say which device: gatehop share remove USER (the list shows them)', 2);
    await ask('DELETE', `/share/devices/${encodeURIComponent(arg)}`);
    process.stdout.write(`gatehop: stopped sharing with ${arg}; its connections are closed\n`);
    return;
  }
  const state =
    action === 'status'
      ? ((await ask('GET', '/share')) as ShareState)
      : ((await ask('PUT', '/share', { enabled: action === 'on' })) as ShareState);
  process.stdout.write(`${describeState(state)}\n`);
  if (state.enabled && !state.listening) process.exitCode = 1;
}

function describeState(s: ShareState): string {
  const lines = [
    s.listening
      ? `sharing with this network on port ${s.port}`
      : s.enabled
        ? `sharing is on but not listening: ${s.error ?? 'unknown reason'}`
        : 'sharing with this network is off',
    `this computer on its networks: ${s.addresses.map((a) => `${a.address} (${a.interface})`).join(', ') || 'no LAN address'}`,
  ];
  if (s.devices.length === 0) lines.push('devices: none yet ("gatehop share add NAME")');
  for (const d of s.devices) {
    const admitted = d.enrolledAddress ? `admitted from ${d.enrolledAddress}` : 'not enrolled';
    lines.push(
      `  ${d.id}  ${d.name}: ${admitted}; ${d.sessionsActive} open, ${d.sessionsTotal} ended; ${d.bytesDown} bytes down, ${d.bytesUp} up`,
    );
  }
  return lines.join('\n');
}
