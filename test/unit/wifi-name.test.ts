/**
 * The Wi-Fi network's name in "this network" (#64): read from what each OS's own tool prints (the
 * outputs below are shaped as iw, macOS's networksetup and Windows' netsh print them), only
 * for interfaces the kernel calls wireless on Linux, and never taken from another interface's
 * block. The name makes two networks with the same /24 two networks, and is shown in the label.
 * No machine here has a wireless device: the readings are pinned on the tools' outputs.
 */
import { describe, expect, it } from 'vitest';
import { networkKeyOf, ssidOfIwLink, ssidOfNetsh, ssidOfNetworksetup, wifiNamesOf } from '../../core/common/index.js';
import { networkLabelOf } from '../../core/app/network-seen.js';

const IW_LINK = `Connected to 3c:84:6a:12:34:56 (on wlan0)
\tSSID: Café Lumen 5G
\tfreq: 5180
\tRX: 123456 bytes (789 packets)
\tsignal: -52 dBm
`;
const NETSH = `
There are 2 interfaces on the system:

    Name                   : Ethernet 2
    Description            : USB adapter
    State                  : disconnected

    Name                   : Wi-Fi
    Description            : Intel(R) Wi-Fi 6 AX201 160MHz
    GUID                   : 1e2d3c4b-0000-0000-0000-000000000000
    Physical address       : 11:22:33:44:55:66
    State                  : connected
    SSID                   : Home : upstairs
    BSSID                  : aa:bb:cc:dd:ee:ff
    Network type           : Infrastructure
`;

describe("the Wi-Fi network's name", () => {
  it("reads each OS tool's answer, and none when not connected", () => {
    expect(ssidOfIwLink(IW_LINK)).toBe('Café Lumen 5G');
    expect(ssidOfIwLink('Not connected.\n')).toBeNull();
    expect(ssidOfNetworksetup('Current Wi-Fi Network: Office\n')).toBe('Office');
    expect(ssidOfNetworksetup('You are not associated with an AirPort network.\n')).toBeNull();
    expect(ssidOfNetsh(NETSH, 'Wi-Fi')).toBe('Home : upstairs');
    // The wired interface's block has no SSID: it is not given the Wi-Fi's.
    expect(ssidOfNetsh(NETSH, 'Ethernet 2')).toBeNull();
  });

  it('asks only about interfaces the kernel calls wireless on Linux, and falls back to iwgetid', () => {
    const asked: string[] = [];
    const run = (cmd: string, args: string[]) => {
      asked.push(`${cmd} ${args.join(' ')}`);
      return cmd === 'iwgetid' ? 'Hotspot\n' : null; // no iw installed
    };
    expect(wifiNamesOf(['eth0', 'wlan0'], run, 'linux', (i) => i === 'wlan0')).toEqual({ wlan0: 'Hotspot' });
    expect(asked).toEqual(['iw dev wlan0 link', 'iwgetid wlan0 --raw']);
    expect(wifiNamesOf(['Wi-Fi', 'Ethernet 2'], () => NETSH, 'win32')).toEqual({ 'Wi-Fi': 'Home : upstairs' });
  });

  it('makes two networks with the same /24 two networks, and names the Wi-Fi in the label', () => {
    const snap = { addresses: ['wlan0 192.168.1.23'], defaultRoute: true, defaultInterfaces: ['wlan0'] };
    const cafe = { ...snap, wifi: { wlan0: 'Café Lumen 5G' } };
    const library = { ...snap, wifi: { wlan0: 'Library' } };
    expect(networkKeyOf(cafe)).not.toBe(networkKeyOf(library));
    expect(networkKeyOf(cafe)).not.toBe(networkKeyOf(snap));
    // Without a name (wired, or an OS that will not say) the key is what it always was.
    expect(networkKeyOf(snap)).toBe(networkKeyOf({ ...snap, wifi: {} }));
    expect(networkLabelOf(cafe)).toBe('Café Lumen 5G · wlan0 192.168.1.x');
    expect(networkLabelOf(snap)).toBe('wlan0 192.168.1.x');
  });
});
