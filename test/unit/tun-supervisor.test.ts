import { describe, expect, it } from 'vitest';
import { parseCoreMessage } from '../../core/capture/tun-messages.js';
import { coreEnvironment, tunUser } from '../../core/capture/tun-supervisor.js';

describe('TUN mode’s supervisor: who the core runs as, and what it takes from it (#59)', () => {
  it('runs the core as the user sudo or pkexec ran for, or --tun-user; never as root, never unnamed', () => {
    expect(tunUser(undefined, { SUDO_UID: '65534' })).toMatchObject({ uid: 65534, name: 'nobody' });
    expect(tunUser(undefined, { PKEXEC_UID: '65534' })).toMatchObject({ uid: 65534 });
    expect(tunUser('nobody', { SUDO_UID: '0' })).toMatchObject({ uid: 65534 });
    expect(() => tunUser(undefined, {})).toThrow(
      /start it with sudo from your account, or name the user with --tun-user/,
    );
    expect(() => tunUser(undefined, { SUDO_UID: '0' })).toThrow(/does not run the core as root/);
    expect(() => tunUser('root', {})).toThrow(/does not run the core as root/);
    expect(() => tunUser('no-such-user-gatehop', {})).toThrow(/no user no-such-user-gatehop/);
  });

  it('gives the core the user’s home and names, not root’s runtime folder', () => {
    const env = coreEnvironment(
      { uid: 65534, name: 'nobody', home: '/nonexistent' },
      { HOME: '/root', USER: 'root', XDG_RUNTIME_DIR: '/run/user/0', PATH: '/usr/bin' },
    );
    expect(env).toMatchObject({ HOME: '/nonexistent', USER: 'nobody', LOGNAME: 'nobody', PATH: '/usr/bin' });
    expect(env.GATEHOP_TUN_SUPERVISED).toBe('1');
    expect(env.XDG_RUNTIME_DIR).toBeUndefined();
  });

  it('takes from the core only tun-up and tun-down, each field bounded', () => {
    const up = {
      kind: 'tun-up',
      socketPath: '/home/u/.config/Gatehop/run/capture.sock',
      tunAddress: '172.23.254.1',
      mtu: 12_040,
      key: 'a'.repeat(64),
    };
    expect(parseCoreMessage(up)).toEqual(up);
    expect(parseCoreMessage({ kind: 'tun-down' })).toEqual({ kind: 'tun-down' });
    // Anything a command line could be made of is refused, not escaped.
    expect(parseCoreMessage({ ...up, tunAddress: '1.2.3.4; nft flush ruleset' })).toBeNull();
    expect(parseCoreMessage({ ...up, key: 'x y' })).toBeNull();
    expect(parseCoreMessage({ ...up, socketPath: 'relative.sock' })).toBeNull();
    expect(parseCoreMessage({ ...up, socketPath: `/${'a'.repeat(200)}` })).toBeNull();
    expect(parseCoreMessage({ ...up, mtu: 100 })).toBeNull();
    expect(parseCoreMessage({ ...up, name: 'eth0' })).toBeNull();
    expect(parseCoreMessage({ kind: 'tun-off-everything' })).toBeNull();
    expect(parseCoreMessage('tun-up')).toBeNull();
  });
});
