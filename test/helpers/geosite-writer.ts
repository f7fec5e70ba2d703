import protobuf from 'protobufjs';

/**
 * geosite.dat written by protobufjs from v2fly's schema (the GeoSiteList of
 * v2fly/v2ray-core's app/router/config.proto, as mihomo reads it): the format's own encoding, so
 * Gatehop's reader is checked against what a real writer produces, not against itself.
 */
const root = protobuf.Root.fromJSON({
  nested: {
    Domain: {
      fields: {
        type: { type: 'int32', id: 1 },
        value: { type: 'string', id: 2 },
        attribute: { rule: 'repeated', type: 'Attribute', id: 3 },
      },
      nested: {
        Attribute: {
          oneofs: { typedValue: { oneof: ['boolValue', 'intValue'] } },
          fields: {
            key: { type: 'string', id: 1 },
            boolValue: { type: 'bool', id: 2 },
            intValue: { type: 'int64', id: 3 },
          },
        },
      },
    },
    GeoSite: {
      fields: {
        countryCode: { type: 'string', id: 1 },
        domain: { rule: 'repeated', type: 'Domain', id: 2 },
      },
    },
    GeoSiteList: { fields: { entry: { rule: 'repeated', type: 'GeoSite', id: 1 } } },
  },
});

export const DomainType = { plain: 0, regexp: 1, domain: 2, full: 3 } as const;

export interface SiteEntry {
  type: keyof typeof DomainType;
  value: string;
  attrs?: string[];
}

export function writeGeoSite(lists: Record<string, SiteEntry[]>): Uint8Array {
  const GeoSiteList = root.lookupType('GeoSiteList');
  const message = GeoSiteList.fromObject({
    entry: Object.entries(lists).map(([code, entries]) => ({
      countryCode: code.toUpperCase(),
      domain: entries.map((e) => ({
        type: DomainType[e.type],
        value: e.value,
        attribute: (e.attrs ?? []).map((key) => ({ key, boolValue: true })),
      })),
    })),
  });
  return GeoSiteList.encode(message).finish();
}

/** `n` names in the `cn` list's shape (domain: entries, a few full: ones), for figures. */
export function bigSiteList(n: number): SiteEntry[] {
  const out: SiteEntry[] = [];
  for (let i = 0; i < n; i++)
    out.push({ type: i % 10 === 0 ? 'full' : 'domain', value: `site${i}.example${i % 97}.cn` });
  return out;
}
