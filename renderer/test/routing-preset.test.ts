/** "Send my country's sites direct" (#33): what the preset writes, for a country with a domestic list and one without. */
import { describe, expect, it } from 'vitest';
import { ruleProviderSchema } from '../../core/api/contract.js';
import { PRESET_COUNTRIES, presetRuleProviders, presetRules, suggestedCountry } from '../src/components/Routing.js';

const country = (code: string) => PRESET_COUNTRIES.find((c) => c.code === code)!;

describe('the country preset', () => {
  it("names the country's domestic list by name before the GeoIP rule, so a listed site goes direct without a lookup", () => {
    const rules = presetRules(country('CN'));
    expect(rules).toEqual([
      'DOMAIN-SUFFIX,localhost,DIRECT',
      'DOMAIN-SUFFIX,local,DIRECT',
      'GEOIP,LAN,DIRECT,no-resolve',
      'DOMAIN-SUFFIX,cn,DIRECT',
      'RULE-SET,cn-domestic,DIRECT',
      'GEOIP,CN,DIRECT',
      'MATCH,TUNNEL',
    ]);
  });

  it('adds the list to the rule sets the user has, keeping theirs; a country without one adds nothing', () => {
    const mine = { ads: { type: 'file' as const, behavior: 'domain' as const, path: '/x/ads.txt', interval: 86_400 } };
    const ir = presetRuleProviders(country('IR'), mine);
    expect(Object.keys(ir)).toEqual(['ads', 'ir-domestic']);
    expect(presetRuleProviders(country('TR'), mine)).toEqual(mine);
    expect(presetRules(country('TR'))).not.toContainEqual(expect.stringMatching(/^RULE-SET/));
  });

  it('every domestic list is a valid rule set from an https URL with its format said', () => {
    const lists = PRESET_COUNTRIES.flatMap((c) => (c.domestic ? [c.domestic] : []));
    expect(lists.map((l) => l.name)).toEqual(['ir-domestic', 'cn-domestic']);
    for (const l of lists) {
      expect(ruleProviderSchema.parse(l.provider)).toEqual(l.provider);
      expect(l.provider.url).toMatch(/^https:\/\//);
      expect(l.provider.format).toBeDefined();
    }
  });

  it('suggests a country from the OS language and region, never from nothing', () => {
    expect(suggestedCountry(['fa-IR'])).toBe('IR');
    expect(suggestedCountry(['zh-CN', 'en'])).toBe('CN');
    expect(suggestedCountry(['fa'])).toBe('IR');
    expect(suggestedCountry(['en-US'])).toBeNull();
  });
});
