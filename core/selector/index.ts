export {
  Selector,
  type ExcludeReason,
  type HistoryStore,
  type RankedNode,
  type Ranking,
  type Prober,
  type RankGate,
} from './selector.js';
export { selectorOptions, selectorOptionsSchema, type SelectorOptions } from './options.js';
export { computePriors, topK, type PriorTerms } from './priors.js';
export { scoreNode, type ScoreTerms } from './score.js';
export { probeNode, tcpHandshakeMs, openvpnUdpResetMs, mapBounded, type ProbeResult } from './probes.js';
export { backoffMs, withFailure, withSuccess, inBackoff, withLeft, leftHolding } from './history.js';
export { urlTest, type UrlTestOptions } from './url-test.js';
export {
  defaultExpectedStatus,
  FailFilter,
  failFilterSchema,
  probeSpecSchema,
  ProbeLoop,
  runProbe,
  type FailFilterOptions,
  type ProbeSpec,
} from './node-probes.js';
