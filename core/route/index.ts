export {
  ROUTE_MODES,
  ROUTE_TARGETS,
  type Decision,
  type Flow,
  type Need,
  type RouteMode,
  type RouteTarget,
} from './types.js';
export { CidrSet, parseCidr } from './cidr-set.js';
export { DomainSet, isDomainName } from './domain-set.js';
export { unsafeRegexReason } from './safe-regex.js';
export { GeoIp } from './geoip.js';
export { pacScript } from './pac.js';
export {
  isLan,
  parseRule,
  parseTarget,
  RuleParseError,
  type CountryLookup,
  type MatchContext,
  type Rule,
  type RuleSetMatcher,
} from './rules.js';
export {
  MAX_RULE_SET_ENTRIES,
  parseRuleSet,
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
  type RuleTableOptions,
} from './rule-table.js';
