import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const BIN = resolve(__dirname, '../../bin/gatehop.js');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'gh-service-'));
  dirs.push(d);
  return d;
}

function gatehop(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
}

/** systemd's own reading of a unit file: its exit code and everything it said (a warning counts). */
function verify(path: string): { code: number | null; said: string } {
  const r = spawnSync('systemd-analyze', ['verify', '--man=no', path], { encoding: 'utf8' });
  if (r.error) throw new Error(`systemd-analyze: ${r.error.message} (scripts/system-deps.sh installs systemd)`);
  return { code: r.status, said: `${r.stdout}${r.stderr}`.trim() };
}

describe('gatehop service (#63: a headless box)', () => {
  it("install writes the user's unit, which systemd accepts with the daemon flags given after --; uninstall removes it and its enable link", () => {
    const home = tempDir();
    const authFile = join(home, 'my users', 'users');
    const r = gatehop(['service', 'install', '--', '--listen', '0.0.0.0:1080', '--auth-file', authFile], {
      XDG_CONFIG_HOME: home,
    });
    expect(r.status, r.stderr).toBe(0);
    const unitPath = join(home, 'systemd', 'user', 'gatehop.service');
    expect(r.stdout).toContain(`wrote ${unitPath}`);
    expect(r.stdout).toContain('systemctl --user daemon-reload && systemctl --user enable --now gatehop');
    const unit = readFileSync(unitPath, 'utf8');
    expect(unit).toContain(`ExecStart=${BIN} --listen 0.0.0.0:1080 --auth-file "${authFile}"`);
    expect(verify(unitPath)).toEqual({ code: 0, said: '' });

    // As `systemctl --user enable` leaves it: the link goes with the unit.
    const wants = join(home, 'systemd', 'user', 'default.target.wants');
    mkdirSync(wants);
    symlinkSync(unitPath, join(wants, 'gatehop.service'));
    const u = gatehop(['service', 'uninstall'], { XDG_CONFIG_HOME: home });
    expect(u.status, u.stderr).toBe(0);
    expect(existsSync(unitPath)).toBe(false);
    expect(existsSync(join(wants, 'gatehop.service'))).toBe(false);
  });

  it("the machine's unit (--print) is accepted by systemd as it is: a dynamic user, no capability, its own state folder", () => {
    const r = gatehop(['service', 'install', '--system', '--print', '--', '--admin', '0.0.0.0:9090']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('DynamicUser=yes');
    expect(r.stdout).toContain('CapabilityBoundingSet=\n');
    const path = join(tempDir(), 'gatehop.service');
    writeFileSync(path, r.stdout);
    expect(verify(path)).toEqual({ code: 0, said: '' });
  });

  it('uninstall leaves alone a unit that gatehop did not write', () => {
    const home = tempDir();
    const unitPath = join(home, 'systemd', 'user', 'gatehop.service');
    mkdirSync(join(home, 'systemd', 'user'), { recursive: true });
    writeFileSync(unitPath, '[Service]\nExecStart=/usr/bin/true\n');
    const r = gatehop(['service', 'uninstall'], { XDG_CONFIG_HOME: home });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('was not written by gatehop: left alone');
    expect(existsSync(unitPath)).toBe(true);
  });
});
