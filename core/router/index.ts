/**
 * Routing, in one place below the proxy front ends: the rule table's state and rule sets'
 * lifecycle (fetched, kept, refreshed, reloaded), GeoIP/GEOSITE/ASN data, the per-flow decision
 * with in-tunnel resolution and process lookup, sniffing, and the egress each target opens on.
 * `core/rules` is the table itself (it names a target and opens nothing); this module owns what a
 * decision needs and where it leads.
 */
export { Router, SNIFF_PORTS, type ProcessLookup, type Routing } from './router.js';
export { SNIFF_MAX_BYTES, sniffName, type SniffResult } from './sniff.js';
export { NameLookups, type NameLookupsOptions } from './name-lookups.js';
export {
  parseLsof,
  parseNetstatPid,
  parseTasklistName,
  processLookup,
  type ProcessLookupStats,
} from './process-lookup.js';
export { RoutingState, type RoutingConfig, type RoutingStatus } from './routing-state.js';
export { MAX_RULE_SET_BYTES, RuleProvider, type RuleProviderConfig, type RuleSetStatus } from './rule-provider.js';
export { LazyData, type LazyDataStatus } from './lazy-data.js';
export { DEFAULT_GEOSITE_URL, GeoSiteSource, type GeoSiteStatus } from './geosite-source.js';
export { ruleSetPath } from './rule-set-path.js';
