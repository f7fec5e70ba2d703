import { describe, expect, it } from 'vitest';
import { envAssignment, execArg, serviceUnit, UNIT_MARK } from '../../core/app/service-unit.js';

describe('a service unit (#63: a headless box)', () => {
  it('writes an ExecStart argument as systemd reads it: plain when safe, else quoted; % and $ doubled', () => {
    expect(execArg('--listen')).toBe('--listen');
    expect(execArg('0.0.0.0:1080')).toBe('0.0.0.0:1080');
    expect(execArg('/tmp/a b/users')).toBe('"/tmp/a b/users"');
    expect(execArg('say "hi"\\')).toBe('"say \\"hi\\"\\\\"');
    expect(execArg('100%')).toBe('100%%');
    expect(execArg('$HOME')).toBe('"$$HOME"');
    expect(envAssignment('PATH', '/opt/node 22/bin:/usr/bin')).toBe('"PATH=/opt/node 22/bin:/usr/bin"');
    expect(envAssignment('PATH', '/usr/bin')).toBe('PATH=/usr/bin');
  });

  it("the machine's unit: a dynamic user, no capability, no new privileges, a read-only system, its own state folder", () => {
    const unit = serviceUnit({
      mode: 'system',
      bin: '/opt/gatehop/bin/gatehop.js',
      path: '/usr/bin',
      args: ['--listen', '0.0.0.0:1080'],
    });
    expect(unit.startsWith(UNIT_MARK)).toBe(true);
    expect(unit).toContain('ExecStart=/opt/gatehop/bin/gatehop.js --data-dir %S/gatehop --listen 0.0.0.0:1080\n');
    for (const line of [
      'DynamicUser=yes',
      'StateDirectory=gatehop',
      'CapabilityBoundingSet=\n',
      'AmbientCapabilities=\n',
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
      'ProtectHome=read-only',
      'PrivateDevices=yes',
      'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK',
      'WantedBy=multi-user.target',
    ])
      expect(unit).toContain(line);
  });

  it("a user's unit: their data folder (no --data-dir), started with their session", () => {
    const unit = serviceUnit({ mode: 'user', bin: '/home/a/gatehop/bin/gatehop.js', path: '/usr/bin', args: [] });
    expect(unit).toContain('ExecStart=/home/a/gatehop/bin/gatehop.js\n');
    expect(unit).toContain('NoNewPrivileges=yes');
    expect(unit).not.toContain('DynamicUser');
    expect(unit).toContain('WantedBy=default.target');
  });
});
