import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runGatehop } from '../helpers/gatehop-process.js';

const clash = (extra = ''): string => `
mode: rule
proxy-groups:
  - { name: PROXY, type: select, proxies: [hk1] }
  - { name: Domestic, type: select, proxies: [DIRECT] }
  - { name: Ads, type: select, proxies: [REJECT] }${extra ? '\n  - { name: Japan, type: url-test, proxies: [hk1] }' : ''}
sub-rules:
  udp: [ "DST-PORT,443,Ads", "MATCH,PROXY" ]
rules:
  - DOMAIN-SUFFIX,cn,Domestic
  - AND,((NETWORK,UDP),(DST-PORT,443)),Ads
  - SUB-RULE,(NETWORK,UDP),udp${extra}
  - MATCH,PROXY
`;

describe('gatehop import-rules: a Clash config saved for the next start, group names mapped (#45)', () => {
  it('with no core running: --yes takes the guesses and saves; an updated file asks only about its new name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-import-rules-'));
    const file = join(dir, 'clash.yaml');
    writeFileSync(file, clash());
    const dry = await runGatehop(['import-rules', file, '--data-dir', dir, '--dry-run', '--yes']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/PROXY: 2 rules → TUNNEL \(guess: first-member\)/);
    expect(dry.stdout).toMatch(/Domestic: 1 rules → DIRECT/);
    expect(dry.stdout).toMatch(/nothing saved/);

    const done = await runGatehop(['import-rules', file, '--data-dir', dir, '--yes', '--map', 'Ads=REJECT']);
    expect(done.code, done.stderr).toBe(0);
    // Its mode is not taken with --yes alone (#59): --set-mode takes it.
    expect(done.stdout).toMatch(/saved 4 rules, 1 sub-rule lists; its mode \(rule\) not taken: --set-mode takes it/);
    const saved = JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')) as {
      settings: { rules: string[]; subRules: Record<string, string[]> };
    };
    expect(saved.settings.rules).toEqual([
      'DOMAIN-SUFFIX,cn,DIRECT',
      'AND,((NETWORK,UDP),(DST-PORT,443)),REJECT',
      'SUB-RULE,(NETWORK,UDP),udp',
      'MATCH,TUNNEL',
    ]);
    expect(saved.settings.subRules).toEqual({ udp: ['DST-PORT,443,REJECT', 'MATCH,TUNNEL'] });
    // gatehop check reads the saved rules as the next start will: no rule left out.
    const check = await runGatehop(['check', '--data-dir', dir]);
    expect(check.stderr).not.toMatch(/left out|unknown target/);

    writeFileSync(file, clash('\n  - DOMAIN-SUFFIX,jp,Japan'));
    // Not on a terminal and without --yes: it names what it would ask, and saves nothing.
    const asks = await runGatehop(['import-rules', file, '--data-dir', dir]);
    expect(asks.code).toBe(3);
    expect(asks.stderr).toMatch(/1 name to map \(Japan\): run again with --map/);
    const mapped = await runGatehop(['import-rules', file, '--data-dir', dir, '--map', 'Japan=DIRECT']);
    expect(mapped.code, mapped.stderr).toBe(0);
    expect(mapped.stdout).toMatch(/PROXY: 2 rules → TUNNEL \(as last time\)/);
    const again = JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')) as { settings: { rules: string[] } };
    expect(again.settings.rules).toContain('DOMAIN-SUFFIX,jp,DIRECT');
  }, 60_000);

  it("takes the config's mode only with --set-mode (#59: a global one sends the home network through a node)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-import-mode-'));
    const file = join(dir, 'clash.yaml');
    writeFileSync(file, clash().replace('mode: rule', 'mode: global'));
    const kept = await runGatehop(['import-rules', file, '--data-dir', dir, '--yes']);
    expect(kept.code, kept.stderr).toBe(0);
    const mode = () =>
      (JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')) as { settings: { mode?: string } }).settings.mode;
    expect(mode()).toBeUndefined();
    const taken = await runGatehop(['import-rules', file, '--data-dir', dir, '--yes', '--set-mode']);
    expect(taken.code, taken.stderr).toBe(0);
    expect(taken.stdout).toMatch(/saved 4 rules, 1 sub-rule lists, mode global;/);
    expect(mode()).toBe('global');
  }, 30_000);

  it('names what is wrong with a file that is not a Clash config, and saves nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-import-rules-'));
    const file = join(dir, 'page.html');
    writeFileSync(file, '<html>captive portal</html>');
    const r = await runGatehop(['import-rules', file, '--data-dir', dir, '--yes']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not a Clash config with rules/);
    const bad = await runGatehop(['import-rules', file, '--data-dir', dir, '--map', 'X=PROXY']);
    expect(bad.code).toBe(2);
  }, 30_000);
});
