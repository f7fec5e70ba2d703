import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig, startApp, type RunningApp } from '../../core/app/index.js';
import { silentLogger } from '../../core/common/index.js';
import { TRIE_WILDCARD } from '../helpers/mihomo-tables.js';

/**
 * mihomo's domain-trie tables (component/trie/domain_test.go, TestTrie_Wildcard) through the
 * whole path: a rule set of those patterns, real HTTP proxy requests, and the 403 that names the
 * rule that refused each. Every name is refused (RULE-SET or MATCH), so nothing leaves this host.
 */
describe('mihomo’s trie tables through real proxy requests (#45)', () => {
  let app: RunningApp;
  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-patterns-'));
    mkdirSync(join(dataDir, 'rule-sets'), { recursive: true });
    writeFileSync(join(dataDir, 'rule-sets', 'trie.txt'), [...TRIE_WILDCARD.patterns, 'Mijia Cloud'].join('\n'));
    app = await startApp(
      buildConfig(
        {
          mode: 'rule',
          rules: [
            'RULE-SET,trie,REJECT',
            // mihomo's logic-rule forms (rules/logic_test/logic_test.go), wrapped and unwrapped.
            'AND,((NETWORK,TCP),(DOMAIN-SUFFIX,logic.test),(DST-PORT,80)),REJECT',
            'OR,((DOMAIN,a.test),(AND,(DOMAIN,b.test),(NETWORK,TCP))),REJECT',
            'NOT,((DOMAIN-SUFFIX,ok.test)),REJECT',
            'MATCH,REJECT',
          ],
          ruleProviders: { trie: { type: 'file', behavior: 'domain', format: 'text', path: 'trie.txt' } },
        },
        { egress: 'direct', listen: '127.0.0.1:0', admin: 'off', logFile: 'off', dataDir },
      ),
      silentLogger(),
    );
  });
  afterAll(() => app.stop());

  /** The rule that refused a plain HTTP request for `host` through the proxy. */
  const refusedBy = (host: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: app.listening.proxy.port, path: `http://${host}/`, headers: { host } },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve(`${res.statusCode} ${/refused by the rule ([A-Z-]+)/.exec(body)?.[1] ?? body}`));
        },
      );
      req.on('error', reject);
      req.end();
    });

  it.each([...TRIE_WILDCARD.in.map((n) => [n, true] as const), ...TRIE_WILDCARD.out.map((n) => [n, false] as const)])(
    '%s is in the set: %s',
    async (host, inSet) => {
      expect(await refusedBy(host)).toBe(inSet ? '403 RULE-SET' : '403 NOT');
    },
  );

  it.each([
    ['x.logic.test', '403 AND'],
    ['a.test', '403 OR'],
    ['b.test', '403 OR'],
    ['elsewhere.example', '403 NOT'],
    ['y.ok.test', '403 MATCH'],
  ])('logic rules on a real request: %s is refused by %s', async (host, by) => {
    expect(await refusedBy(host)).toBe(by);
  });
});
