import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import type { EgressSource } from '../../core/contracts/index.js';
import { RuleTable } from '../../core/rules/index.js';
import { Router } from '../../core/router/index.js';

/** A tunnel whose resolver fails while `down` (no tunnel up yet) and answers 10.1.1.1 after. */
function tunnel(state: { down: boolean; asked: number }): EgressSource {
  return {
    acquire: () =>
      ({
        egress: {
          resolve: async () => {
            state.asked++;
            if (state.down) throw new Error('no tunnel is up');
            return ['10.1.1.1'];
          },
        },
        release: () => undefined,
        onRetire: () => () => undefined,
      }) as never,
  };
}

describe('Router: names resolved in the tunnel for the rules (#45)', () => {
  afterEach(() => vi.useRealTimers());

  it('a lookup that failed (no tunnel yet) is asked again after 2 s, not a minute; an answer is kept the minute', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const state = { down: true, asked: 0 };
    const table = new RuleTable({ mode: 'rule', rules: ['IP-CIDR,10.0.0.0/8,DIRECT', 'MATCH,TUNNEL'] });
    const router = new Router({ table: () => table, direct: tunnel(state) }, tunnel(state), silentLogger());
    const flow = { network: 'tcp', host: 'intranet.example', port: 443 } as const;
    expect((await router.decide(flow)).target).toBe('TUNNEL'); // unknown address: the rule does not match
    state.down = false;
    expect((await router.decide(flow)).target).toBe('TUNNEL'); // within the 2 s, the failure stands
    vi.setSystemTime(Date.now() + 2_500);
    expect((await router.decide(flow)).target).toBe('DIRECT');
    const asked = state.asked;
    vi.setSystemTime(Date.now() + 50_000);
    expect((await router.decide(flow)).target).toBe('DIRECT');
    expect(state.asked).toBe(asked); // the answer is kept the minute
  });
});

describe('Router: a decision made on an in-tunnel address carries it, for the DIRECT dial (#45)', () => {
  it('the address a rule needed comes with the decision; a decision by name alone has none', async () => {
    const state = { down: false, asked: 0 };
    const table = new RuleTable({
      mode: 'rule',
      rules: [
        'DOMAIN-SUFFIX,home.example,DIRECT',
        'IP-CIDR,10.0.0.0/8,DIRECT,no-resolve',
        'IP-CIDR,10.1.0.0/16,DIRECT',
        'MATCH,TUNNEL',
      ],
    });
    const router = new Router({ table: () => table, direct: tunnel(state) }, tunnel(state), silentLogger());
    // Decided by the third rule on the address the tunnel gave: DIRECT, to be dialled at 10.1.1.1.
    expect(await router.decide({ network: 'tcp', host: 'only-in-tunnel.example', port: 443 })).toEqual({
      target: 'DIRECT',
      rule: 'IP-CIDR',
      payload: '10.1.0.0/16',
      address: '10.1.1.1',
    });
    // By name: no lookup, no address (a DIRECT flow by name is resolved where it leaves, as before).
    expect(await router.decide({ network: 'tcp', host: 'nas.home.example', port: 443 })).toEqual({
      target: 'DIRECT',
      rule: 'DOMAIN-SUFFIX',
      payload: 'home.example',
    });
    // Addressed by IP: the address is the destination itself.
    expect((await router.decide({ network: 'tcp', host: '10.1.2.3', port: 443 })).address).toBeUndefined();
  });
});
