import type { Logger } from '../common/index.js';
import { egressDialer } from '../egress/index.js';
import { ProbeLoop, type FailFilter, type ProbeSpec } from '../selector/index.js';
import type { Held } from './types.js';

export interface ActiveProbesDeps {
  failFilter: FailFilter;
  probes: () => readonly ProbeSpec[];
  maxFails: () => number;
  onRtt: (nodeId: string, ms: number) => void;
  /** The active node failed maxFails probes: leave it. */
  onDead: (held: Held, why: string) => void;
  logger: Logger;
}

/**
 * The active node's in-tunnel probes (GOST style): results feed the fail filter and the node's
 * RTT; the active node found dead is left at once. One loop at a time, owned by the held tunnel
 * (it stops when the tunnel is let go).
 */
export class ActiveProbes {
  #loop: ProbeLoop | null = null;

  constructor(private readonly deps: ActiveProbesDeps) {}

  start(held: Held): void {
    this.stop();
    const specs = this.deps.probes();
    if (specs.length === 0) return;
    const log = this.deps.logger;
    const loop = new ProbeLoop(
      held.node.id,
      specs,
      egressDialer(held.egress),
      this.deps.failFilter,
      (r) => {
        if (r.ok && r.ms !== null) this.deps.onRtt(r.nodeId, r.ms);
        if (!r.ok)
          log.info(
            { event: 'probe-failed', nodeId: r.nodeId, probe: r.spec.type, err: r.error, dead: r.dead },
            `${r.spec.type} probe of ${r.nodeId} failed${r.dead ? ': node marked dead' : ''}`,
          );
        else if (r.changed)
          log.info(
            { event: 'probe-recovered', nodeId: r.nodeId, probe: r.spec.type, ms: r.ms },
            `${r.nodeId} answers its probes again`,
          );
        if (r.dead && r.changed)
          this.deps.onDead(held, `active node ${r.nodeId} failed ${this.deps.maxFails()} probes`);
      },
      log,
    );
    this.#loop = loop;
    held.off.push(() => {
      loop.close();
      if (this.#loop === loop) this.#loop = null;
    });
    loop.start();
  }

  stop(): void {
    this.#loop?.close();
    this.#loop = null;
  }
}
