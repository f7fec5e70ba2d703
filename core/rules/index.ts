export {
  ROUTE_MODES,
  ROUTE_TARGETS,
  type Decision,
  type Flow,
  type InboundType,
  type Need,
  type RouteMode,
  type RouteTarget,
} from './types.js';
export { CidrSet, parseCidr } from './cidr-set.js';
export { DomainSet, isDomainName } from './domain-set.js';
export { compileUserRegex, MAX_REGEX_LENGTH } from './user-regex.js';
export { globMatch } from './glob.js';
export { isLan } from './flow-facts.js';
export { GeoIp } from './geoip.js';
export { AsnDb } from './asn.js';
export { GeoSite, MAX_GEOSITE_BYTES } from './geosite.js';
export {
  MAX_CLASH_CONFIG_BYTES,
  readClashConfig,
  retarget,
  ruleTarget,
  type ClashImport,
  type ImportedProvider,
  type ImportedTarget,
} from './clash-import.js';
export { readMrs, readMrsPayload, MAX_MRS_BYTES } from './mrs.js';
export { MAX_RULE_SET_ENTRIES, MAX_RULE_SET_NAME_BYTES } from './rule-set-limits.js';
export { pacScript } from './pac.js';
export {
  parseRule,
  parseTarget,
  RuleParseError,
  type CountryLookup,
  type MatchContext,
  type Rule,
  type RuleSetMatcher,
  type AsnLookup,
  type SiteLookup,
} from './rules.js';
export {
  ENTRIES_PER_TURN,
  parseMrsRuleSet,
  parseRuleSet,
  parseRuleSetAsync,
  RuleSet,
  type RuleSetBehavior,
  type RuleSetError,
  type RuleSetFormat,
} from './rule-set.js';
export {
  DEFAULT_RULES,
  parseRuleLines,
  RuleTable,
  type Answer,
  type RuleError,
  type RulePath,
  type RuleTableOptions,
} from './rule-table.js';
