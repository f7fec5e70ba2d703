import { z } from 'zod';
import { tunnelProtocolSchema as protocol } from '../api/index.js';
import type { ProtocolMemory } from '../groups/index.js';
import type { Store } from '../store/index.js';

/** What a network taught, as saved: older versions saved no `blocked`. */
const lessonSchema = z.object({
  preferred: protocol.nullable(),
  blocked: protocol.nullable().optional(),
  reason: z.string(),
  at: z.number().optional(),
  path: z.enum(['direct', 'upstream']).optional(),
});

/**
 * What each network taught about protocols, in the store's settings (one key per network). A
 * value that does not parse (a damaged row, a protocol this version does not know) is forgotten,
 * not fatal: the network is then learnt again.
 */
export function protocolMemoryOf(store: Store): ProtocolMemory {
  const key = (network: string): string => `protocol-preference ${network}`;
  return {
    load: (network) => {
      try {
        const v = store.setting(key(network));
        const parsed = v ? lessonSchema.safeParse(JSON.parse(v)) : null;
        return parsed?.success ? parsed.data : null;
      } catch {
        return null;
      }
    },
    save: (network, v) => {
      try {
        store.setSetting(key(network), JSON.stringify(v));
      } catch {
        /* remembered for this run only */
      }
    },
  };
}
