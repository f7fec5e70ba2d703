/**
 * The soak in CI (issue #24): bench/lib/soak.ts for GATEHOP_SOAK_MINUTES (10) with the event
 * schedule compressed (× 0.4: a pick every 48 s, a death every 2 min, a refresh every 72 s, a
 * reload every 4 min, a sleep every 6 min). Its figures are printed; only correctness is asserted:
 * no corrupt byte, no failed request outside what a node's death or a sleep may cost, the fds back
 * to where they started and one worker per live tunnel after every death, reload and sleep.
 * `npm run bench:soak` runs the 60-minute one and judges the memory and loop targets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judge } from '../../bench/soak.js';
import { fdsBack, runSoak } from '../../bench/lib/soak.js';
import { isRoot } from '../helpers/netns.js';
import { Rig } from '../rig/rig.js';

const MINUTES = Number(process.env.GATEHOP_SOAK_MINUTES ?? 10);

describe.skipIf(!isRoot)('the soak, compressed (issue #24)', () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await Rig.up({ nodes: 3, openvpn: ['gcm-udp', 'cbc-tcp'], bigMib: 4 });
  }, 240_000);
  afterAll(() => rig?.down());

  it(
    `${MINUTES} minutes of traffic, picks, node deaths, refreshes, reloads and a sleep: nothing corrupt, nothing lost but what a death costs, fds and workers back`,
    async () => {
      const r = await runSoak(rig, {
        minutes: MINUTES,
        scale: 0.4,
        onEvent: (e) => console.log(`[${e.t} min] ${e.kind}: ${e.detail}`),
      });
      console.log(judge(r).join('\n'));
      expect(r.samples.length).toBeGreaterThanOrEqual(MINUTES);
      expect(r.deaths.length).toBeGreaterThanOrEqual(1);
      expect(r.mismatches).toBe(0);
      expect(r.requests.failures).toEqual([]);
      // Back to where the steady core started, its ends of the harness's own open connections aside.
      // Threads the worker pool keeps idle are event loops with fds of their own, counted apart (#44).
      const idle = `idle pool threads ${r.fds.idleThreads.baseline} → ${r.fds.idleThreads.end}`;
      expect(fdsBack(r), `fds ${r.fds.baseline} → ${r.fds.end} (${idle}): ${r.fds.diff.join(', ')}`).toBe(true);
      for (const e of r.fds.afterEvents) expect(e, e.kind).toMatchObject({ workers: e.expectedWorkers });
    },
    (MINUTES + 8) * 60_000,
  );
});
